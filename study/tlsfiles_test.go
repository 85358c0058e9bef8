package study

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/grpcany/grpcanytest"
)

// TestLoadTLSFiles: a load's ca_file, cert_file and key_file reach every
// kind of client's connection settings, resolved against the study
// file's directory; a run of a raw cell verifies an https server against
// ca_file (and fails without it) and shows the server, which requires
// one, its client certificate; cert_file without key_file is an error at
// its line.
func TestLoadTLSFiles(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the run without ca_file fails its handshakes
	cert, key := testkit.ClientCert(t)
	client, err := x509.ParseCertificate(cert)
	if err != nil {
		t.Fatal(err)
	}
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: x509.NewCertPool()}
	srv.TLS.ClientCAs.AddCert(client)
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	testkit.WritePEM(t, dir, "ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	testkit.WritePEM(t, dir, "client.pem", &pem.Block{Type: "CERTIFICATE", Bytes: cert})
	testkit.WritePEM(t, dir, "client.key", &pem.Block{Type: "EC PRIVATE KEY", Bytes: key})
	os.WriteFile(filepath.Join(dir, "calls.jsonl"), []byte(`{"t": 0, "method": "GET", "url": "/"}`+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "flow.yaml"), []byte("flow:\n  - get: {name: root, url: /}\n"), 0o600)
	grpcanytest.WriteProtoset(t, filepath.Join(dir, "test.protoset"))
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	files := "ca_file: ca.pem, cert_file: client.pem, key_file: client.key"
	study := "name: tls\nduration: 1s\ntrials: 1\nserver: {command: [./srv]}\ncells:\n" +
		"  - name: raw\n    load: {url: \"https://127.0.0.1:" + port + "/\", requests: 5, concurrency: 1, " + files + "}\n" +
		"  - name: h2\n    load: {url: \"https://127.0.0.1:" + port + "/\", transport: h2, " + files + "}\n" +
		"  - name: api\n    load: {url: \"https://127.0.0.1:" + port + "\", scenario: get, " + files + "}\n" +
		"  - name: flow\n    load: {url: \"https://127.0.0.1:" + port + "\", flow: flow.yaml, " + files + "}\n" +
		"  - name: replay\n    load: {url: \"https://127.0.0.1:" + port + "\", replay: calls.jsonl, " + files + "}\n" +
		"  - name: grpc\n    load: {url: \"https://127.0.0.1:" + port + "\", grpc: grpc.testing.TestService/UnaryCall, protoset: test.protoset, " + files + "}\n"
	path := filepath.Join(dir, "tls.yaml")
	def, err := Parse(path, []byte(study), os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	want := conn.Options{CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "client.pem"), KeyFile: filepath.Join(dir, "client.key")}
	for _, c := range def.Cells {
		var got conn.Options
		switch l := c.Load; {
		case l.Raw != nil:
			got = l.Raw.Options
		case l.Scenario != nil:
			got = l.Scenario.Options
		case l.Flow != nil:
			got = l.FlowConn.Options
		case l.Replay != nil:
			got = l.Replay.Options
		case l.GRPC != nil:
			got = l.GRPC.Options
		default:
			t.Fatalf("cell %s: no client", c.Label)
		}
		if got.CAFile != want.CAFile || got.CertFile != want.CertFile || got.KeyFile != want.KeyFile {
			t.Errorf("cell %s: ca %q cert %q key %q, want the study's files", c.Label, got.CAFile, got.CertFile, got.KeyFile)
		}
	}
	// A run verifies the server against ca_file, and fails without it.
	for _, withCA := range []bool{true, false} {
		l := def.Cells[0].Load
		raw := *l.Raw
		if !withCA {
			raw.CAFile = ""
		}
		l.Raw = &raw
		m, err := newClient(l, vars{ports: []int{1}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Run(context.Background())
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		if withCA && (res.Requests != 5 || res.Failed != 0) || !withCA && res.Failed != res.Requests {
			t.Errorf("ca_file %v: %d requests, %d failed (%v)", withCA, res.Requests, res.Failed, res.Failures)
		}
	}
	bad := strings.Replace(study, ", key_file: client.key}\n  - name: h2", "}\n  - name: h2", 1)
	if _, err := Parse(path, []byte(bad), os.ReadFile); err == nil || !strings.Contains(err.Error(), "tls.yaml:7: cells[0] (raw).load: cert_file and key_file go together") {
		t.Errorf("cert_file alone: %v", err)
	}
}
