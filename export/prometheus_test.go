package export

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// promServer is a real Prometheus (Debian's package) with the remote
// write receiver and native histograms on, in a temporary directory.
type promServer struct{ base string }

// startPrometheus starts prometheus, or skips outside CI when it is not
// installed (CI installs it: .ci/run). It gets one CPU and a soft
// memory limit, and is stopped with its process group when the test ends.
// It scrapes scrapeAddr's /metrics every second, if given.
func startPrometheus(t *testing.T, scrapeAddr string) *promServer {
	t.Helper()
	bin := testkit.NeedTool(t, "prometheus", "apt-get install -y prometheus")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	yml := "global:\n  scrape_interval: 1h\n"
	if scrapeAddr != "" {
		yml += "scrape_configs:\n  - job_name: wirebench\n    scrape_interval: 1s\n    static_configs:\n      - targets: ['" + scrapeAddr + "']\n"
	}
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	// A free port, closed and passed on: prometheus neither prints the
	// address it bound to :0 nor takes a listener. Should another process
	// take the port meanwhile, prometheus exits and the test says so.
	l := testkit.Listen(t)
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--web.enable-remote-write-receiver",
		"--enable-feature=native-histograms,exemplar-storage", "--log.level=warn")
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GOMEMLIMIT=256MiB")
	proc := testkit.Start(t, cmd)
	p := &promServer{base: "http://" + addr}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(p.base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 60 s: %v\n%s", err, proc.Log())
		}
		select {
		case <-proc.Done():
			t.Fatalf("prometheus exited: %v\n%s", proc.Wait(), proc.Log())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (p *promServer) writeURL() string { return p.base + "/api/v1/write" }

// query runs an instant PromQL query at time at and returns the single
// sample's value.
func (p *promServer) query(t *testing.T, q string, at time.Time) float64 {
	t.Helper()
	v := url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}
	resp, err := http.Get(p.base + "/api/v1/query?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Status != "success" || len(body.Data.Result) != 1 {
		t.Fatalf("query %s: %s %s: %d results", q, body.Status, body.Error, len(body.Data.Result))
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("query %s: value %v", q, body.Data.Result[0].Value)
	}
	return f
}

// exemplars returns the trace IDs of the exemplars Prometheus stored for
// a series selector.
func (p *promServer) exemplars(t *testing.T, sel string, from, to time.Time) []string {
	t.Helper()
	v := url.Values{"query": {sel}, "start": {fmt.Sprint(from.Unix() - 1)}, "end": {fmt.Sprint(to.Unix() + 1)}}
	resp, err := http.Get(p.base + "/api/v1/query_exemplars?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Data   []struct {
			Exemplars []struct {
				Labels map[string]string `json:"labels"`
			} `json:"exemplars"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range body.Data {
		for _, e := range s.Exemplars {
			ids = append(ids, e.Labels["trace_id"])
		}
	}
	return ids
}
