package link

import (
	"fmt"
	"os/exec"
	"syscall"
)

// HostEnv names the variable that gives a command on the far side the
// near side's address (wirebench link, Start).
const HostEnv = "WIREBENCH_LINK_HOST"

// Start starts cmd on the far side of the link: its only network is the
// link, and 127.0.0.1 (or $WIREBENCH_LINK_HOST) reaches the near side's
// servers through it. The process is killed if this one dies, so that a
// crash leaves nothing running in a namespace without its relay; what it
// starts itself is killed then too, or when the link is closed.
func (l *Link) Start(cmd *exec.Cmd) error {
	if err := l.startReaper(); err != nil {
		return fmt.Errorf("link: starting its reaper: %w", err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.Env = append(cmd.Environ(), HostEnv+"="+l.Near.String())
	return l.Do(cmd.Start)
}
