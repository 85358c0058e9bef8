package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// startServe runs the built binary on ports it picks itself (it prints
// the addresses it bound) and returns its addresses.
func startServe(t *testing.T, bin string, args ...string) (httpAddr, grpcAddr string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0"}, args...)...)
	_, m := testkit.StartLine(t, cmd, listeningRE, time.Minute)
	return m[1], m[2]
}

var listeningRE = regexp.MustCompile(`^listening http=(\S+) grpc=(\S+)`)

// TestPeerGRPCTools checks the gRPC port with tools nobody here wrote:
// grpcurl lists the services through reflection and calls them, ghz loads
// them without errors.
func TestPeerGRPCTools(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	grpcurl := testkit.NeedTool(t, "grpcurl", "go install github.com/fullstorydev/grpcurl/cmd/grpcurl@latest")
	ghz := testkit.NeedTool(t, "ghz", "go install github.com/bojand/ghz/cmd/ghz@latest")
	_, addr := startServe(t, testkit.Binary(t), "--seed-users", "5")

	out, err := exec.Command(grpcurl, "-plaintext", addr, "list").CombinedOutput()
	if err != nil {
		t.Fatalf("grpcurl list: %v\n%s", err, out)
	}
	for _, svc := range []string{"wirebench.v1.UserService", "wirebench.v1.TodoService", "wirebench.v1.EchoService", "grpc.health.v1.Health"} {
		if !strings.Contains(string(out), svc) {
			t.Errorf("grpcurl list lacks %s:\n%s", svc, out)
		}
	}
	out, err = exec.Command(grpcurl, "-plaintext", "-d", `{"name":"Ada","email":"ada@example.com"}`, addr, "wirebench.v1.UserService/Create").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"id": "6"`) || !strings.Contains(string(out), "createdAt") {
		t.Fatalf("grpcurl Create: %v\n%s", err, out)
	}
	out, err = exec.Command(grpcurl, "-plaintext", "-d", `{"id":404}`, addr, "wirebench.v1.UserService/Get").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "NotFound") {
		t.Fatalf("grpcurl Get of a missing user: %v\n%s", err, out)
	}

	out, err = exec.Command(ghz, "--insecure", "--call", "wirebench.v1.UserService.Get", "-d", `{"id":1}`,
		"-n", "500", "-c", "4", "--format", "json", addr).Output()
	if err != nil {
		t.Fatalf("ghz: %v\n%s", err, out)
	}
	var rep struct {
		Count          int            `json:"count"`
		StatusCodeDist map[string]int `json:"statusCodeDistribution"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("ghz report: %v\n%s", err, out)
	}
	if rep.Count != 500 || rep.StatusCodeDist["OK"] != 500 {
		t.Fatalf("ghz: count %d, status %v", rep.Count, rep.StatusCodeDist)
	}
}

// TestPeerGRPCClientsBesideGhz runs ghz and both of our gRPC clients
// (lean, the default; std, grpc-go) against one server at the same time:
// every client counts exactly the calls it made, all OK, and our clients'
// checks of each reply pass while ghz loads the same connection limit.
func TestPeerGRPCClientsBesideGhz(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	ghz := testkit.NeedTool(t, "ghz", "go install github.com/bojand/ghz/cmd/ghz@latest")
	bin := testkit.Binary(t)
	_, addr := startServe(t, bin, "--seed-users", "50", "--h2-max-streams", "4")
	type report struct {
		Count          int            `json:"count"`
		StatusCodeDist map[string]int `json:"statusCodeDistribution"`
	}
	ghzDone := make(chan report, 1)
	go func() {
		var rep report
		out, err := exec.Command(ghz, "--insecure", "--call", "wirebench.v1.UserService.Get", "-d", `{"id":1}`,
			"-n", "3000", "-c", "8", "--format", "json", addr).Output()
		if err == nil {
			err = json.Unmarshal(out, &rep)
		}
		if err != nil {
			t.Errorf("ghz: %v\n%s", err, out)
		}
		ghzDone <- rep
	}()
	for _, client := range []string{"lean", "std"} {
		res := runWirebench(t, []string{bin, "load", "-q", "--scenario", "crud", "--transport", "grpc", "--client", client,
			"-c", "8", "-n", "3000", "--out"}, addr)
		if res.Requests != 3000 || res.Failed != 0 {
			t.Errorf("%s client: %d requests, %d failed; want 3000 and 0", client, res.Requests, res.Failed)
		}
	}
	if rep := <-ghzDone; rep.Count != 3000 || rep.StatusCodeDist["OK"] != 3000 {
		t.Errorf("ghz beside them: count %d, status %v", rep.Count, rep.StatusCodeDist)
	}
}

// TestPeerK6CRUD runs the TOON seed's CRUD iteration in k6 against the REST
// API; the script's threshold fails k6 unless 100% of checks pass.
func TestPeerK6CRUD(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	k6 := testkit.NeedTool(t, "k6", "go install go.k6.io/k6@latest")
	httpAddr, _ := startServe(t, testkit.Binary(t))
	cmd := exec.Command(k6, "run", "--quiet", "--no-usage-report", "-e", "BASE=http://"+httpAddr,
		"-e", "VUS=5", "-e", "ITERATIONS=200", "--summary-export", filepath.Join(t.TempDir(), "s.json"), "../../bench/k6/crud.js")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("k6: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`checks\S*\s*:?\s*100\.00%`).Match(out) {
		t.Fatalf("k6 checks not 100%%:\n%s", out)
	}
}
