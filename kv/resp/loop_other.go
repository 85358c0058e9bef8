//go:build !linux

package resp

import (
	"errors"
	"net"
)

// defaultEngine is a goroutine per connection where the event loop
// (loop_linux.go, epoll) is not written.
const defaultEngine = EngineOwn

type loop struct{}

func (s *Server) startLoops(int) error {
	return errors.New("resp: engine loop needs Linux (epoll); use own or redcon")
}

func (s *Server) handOff(c net.Conn) {}

func (l *loop) stop() {}
