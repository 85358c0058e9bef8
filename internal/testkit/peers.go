package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// StartNginx runs nginx (no daemon, a master and one worker) from a
// temporary prefix on n listeners it inherits already bound, and returns
// their addresses. http is the body of the config's http block, given the
// prefix directory (for paths) and the addresses (for the listen lines,
// which must name them exactly: that is how nginx matches an inherited
// socket). prefix goes before nginx on the command line (e.g. taskset).
func StartNginx(t testing.TB, prefix []string, n int, http func(dir string, addrs []string) string) []string {
	t.Helper()
	bin := NeedTool(t, "nginx", "apt-get install -y nginx")
	dir := t.TempDir()
	var addrs, fds []string
	var files []*os.File
	for i := range n {
		ln := Listen(t)
		addrs = append(addrs, ln.Addr().String())
		files = append(files, ListenerFile(t, ln))
		fds = append(fds, fmt.Sprint(3+i))
	}
	conf := fmt.Sprintf(`daemon off;
master_process on;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
%[2]s
}
`, dir, http(dir, addrs))
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// master_process off segfaults nginx 1.22 on inherited sockets.
	argv := append(append([]string{}, prefix...), bin, "-p", dir, "-c", path, "-e", filepath.Join(dir, "error.log"))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.ExtraFiles = files
	// nginx's binary-upgrade protocol: the sockets it inherits, "fd;fd;".
	cmd.Env = append(os.Environ(), "NGINX="+strings.Join(fds, ";")+";")
	p := Start(t, cmd)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx error.log:\n%s", b)
		}
	})
	for _, a := range addrs {
		p.WaitDial(t, a, 30*time.Second) // the socket is there from the start: this waits for the process
	}
	// The listeners accept before nginx runs (the kernel queues): wait for
	// its pid file, written once the configuration is in effect.
	if err := p.waitFor(30*time.Second, func() error {
		_, err := os.Stat(filepath.Join(dir, "nginx.pid"))
		return err
	}); err != nil {
		t.Fatalf("testkit: nginx: %v; output:\n%s", err, p.Log())
	}
	return addrs
}

// pythonServer serves the working directory like `python3 -m http.server`
// (ThreadingHTTPServer, SimpleHTTPRequestHandler: HTTP/1.0, a close per
// response) on the socket it inherits as fd 3, with http.server's listen
// backlog of 5.
const pythonServer = `
import http.server, socket, sys
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler, bind_and_activate=False)
srv.socket.close()
srv.socket = socket.socket(fileno=3)
srv.server_address = srv.socket.getsockname()
srv.socket.listen(srv.request_queue_size)
print("serving", srv.server_address, flush=True)
srv.serve_forever()
`

// StartPythonHTTP runs python's http.server serving dir on a listener it
// inherits already bound, and returns its address. prefix goes before
// python3 on the command line (e.g. taskset).
func StartPythonHTTP(t testing.TB, prefix []string, dir string) string {
	t.Helper()
	bin := NeedTool(t, "python3", "apt-get install -y python3")
	ln := Listen(t)
	argv := append(append([]string{}, prefix...), bin, "-c", pythonServer)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.ExtraFiles = []*os.File{ListenerFile(t, ln)}
	p := Start(t, cmd)
	if err := p.waitFor(30*time.Second, func() error {
		if !strings.Contains(p.Log(), "serving") {
			return fmt.Errorf("no \"serving\" line yet")
		}
		return nil
	}); err != nil {
		t.Fatalf("testkit: python http.server: %v; output:\n%s", err, p.Log())
	}
	return ln.Addr().String()
}
