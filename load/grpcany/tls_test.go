package grpcany_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/grpcany"
	"github.com/wirebench/wirebench/load/grpcany/grpcanytest"
)

// TestTLS calls a stock grpc-go server over TLS that requires a client
// certificate, by reflection, with the CA and the client certificate from
// files: unary calls on both clients and a bidi stream, every call
// checked, the server's count equal to ours.
func TestTLS(t *testing.T) {
	certs := grpcanytest.NewTLS(t, true)
	srv := grpcanytest.StartTLS(t, true, certs.Server)
	o := grpcany.Options{Method: unary, Data: `{"response_size": 4, "response_status": {"message": "tls-{{.N}}"}}`,
		Expect: []string{`payload.body=="AAAAAA=="`}}
	o.URL, o.CAFile, o.CertFile, o.KeyFile = "https://"+srv.Addr, certs.CA, certs.ClientCert, certs.ClientKey
	for _, client := range []string{conn.ClientLean, conn.ClientStd} {
		o.Client = client
		o.Data = `{"response_size": 4, "response_status": {"message": "` + client + `-{{.N}}"}}`
		res := run(t, srv, o, 100, 3)
		if res.Bytes.WireIn <= res.Bytes.BodyIn+100*(9+5+9) { // more than h2 and gRPC framing: TLS records
			t.Fatalf("%s: wire bytes %+v", client, res.Bytes)
		}
	}
	b := o
	b.Client, b.Method, b.Messages = "", "grpc.testing.TestService/FullDuplexCall", 3
	b.Data, b.Expect = `{"response_parameters": [{"size": 1}], "response_status": {"message": "tlsb{{.N}}.{{.I}}"}}`, nil
	run(t, srv, b, 20, 2)
	if ids, most := srv.IDs(); ids != 200+60 || most != 1 {
		t.Fatalf("server saw %d distinct ids (most %d times); want 260 once each", ids, most)
	}

	// Each missing piece is refused before any call, with its reason.
	for _, tc := range []struct {
		name string
		edit func(*grpcany.Options)
		want string
	}{
		{"no CA", func(o *grpcany.Options) { o.CAFile = "" }, "certificate"},
		// TLS 1.3 tells the client after its handshake: the alert, or a
		// broken pipe when the server has closed first.
		{"no client certificate", func(o *grpcany.Options) { o.CertFile, o.KeyFile = "", "" }, ""},
		{"plaintext target", func(o *grpcany.Options) { o.URL = srv.Addr }, "are TLS's"},
	} {
		bad := o
		tc.edit(&bad)
		_, err := grpcany.New(context.Background(), bad)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	plain := o
	plain.URL, plain.CAFile, plain.CertFile, plain.KeyFile = srv.Addr, "", "", ""
	if _, err := grpcany.New(context.Background(), plain); err == nil || errors.Is(err, grpcany.ErrOptions) {
		t.Errorf("h2c to a TLS server: %v, want it unreachable", err)
	}
}

// TestTLSProtocols: gRPC-Web and Connect over https:// (HTTP/1.1 by ALPN;
// Connect's bidi calls on h2), with the client certificate the server
// requires, the layers parsed inside TLS and the records' own bytes in
// Other.
func TestTLSProtocols(t *testing.T) {
	certs := grpcanytest.NewTLS(t, true)
	srv := grpcanytest.StartConnectTLS(t, certs.Server)
	dir := t.TempDir()
	file := grpcanytest.WriteProtos(t, dir)
	o := grpcany.Options{Protos: []string{file}, ImportPaths: []string{dir}}
	o.URL, o.CAFile, o.CertFile, o.KeyFile = "https://"+srv.Addr, certs.CA, certs.ClientCert, certs.ClientKey
	for _, p := range []string{grpcany.GRPC, grpcany.GRPCWeb, grpcany.Connect} {
		u := o
		u.Method, u.Protocol = unary, p
		u.Data, u.Expect = `{"response_size": 3, "response_status": {"message": "`+p+`-{{.N}}"}}`, []string{`payload.body=="AAAA"`}
		res := run(t, srv, u, 50, 2)
		if p != grpcany.GRPC && (res.Layers == nil || res.Layers.In.Other == 0 || res.Layers.In.Total() != res.Bytes.WireIn || res.Layers.In.Message < res.Bytes.BodyIn) {
			t.Fatalf("%s: layers %+v bytes %+v: want the TLS records in Other, the layers summing to the wire", p, res.Layers, res.Bytes)
		}
	}
	connectStreams(t, srv, o)
}
