package kvhttp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
)

// metrics serves next's /metrics with the store's figures appended, in
// the Prometheus text format. Accept-Encoding is dropped for the inner
// handler so its text can be extended (metrics are small).
func (h *handler) metrics(w http.ResponseWriter, r *http.Request) {
	r2 := r.Clone(r.Context())
	r2.Header.Del("Accept-Encoding")
	r2.Header.Set("Accept", "text/plain")
	rec := httptest.NewRecorder()
	h.next.ServeHTTP(rec, r2)
	for k, v := range rec.Header() {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	body := rec.Body.Bytes()
	if rec.Code == http.StatusOK {
		body = append(body, kvMetrics(h)...)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.Code)
	w.Write(body)
}

func kvMetrics(h *handler) []byte {
	in := h.st.Info()
	var b []byte
	w := func(name, typ, help string, v int64, labels ...string) {
		if typ != "" {
			b = fmt.Appendf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		}
		if len(labels) == 2 {
			b = fmt.Appendf(b, "%s{%s=%q} %d\n", name, labels[0], labels[1], v)
		} else {
			b = fmt.Appendf(b, "%s %d\n", name, v)
		}
	}
	w("wirebench_kv_keys", "gauge", "Keys in the KV store (expired ones not yet removed included).", int64(in.Keys))
	w("wirebench_kv_ops_total", "counter", "KV store operations by kind, all faces.", in.Gets, "op", "get")
	w("wirebench_kv_ops_total", "", "", in.Hits, "op", "hit")
	w("wirebench_kv_ops_total", "", "", in.Misses, "op", "miss")
	w("wirebench_kv_ops_total", "", "", in.Writes, "op", "write")
	w("wirebench_kv_ops_total", "", "", in.Deleted, "op", "delete")
	w("wirebench_kv_ops_total", "", "", in.Expired, "op", "expired")
	w("wirebench_kv_ops_total", "", "", in.Refused, "op", "refused")
	if in.Policy != "" {
		w("wirebench_kv_aof_bytes", "gauge", "Size of the append-only file.", in.AOFSize)
		w("wirebench_kv_aof_fsyncs_total", "counter", "fsyncs of the append-only file.", in.Fsyncs)
		w("wirebench_kv_aof_batches_total", "counter", "Group-commit batches written to the append-only file.", in.Batches)
		w("wirebench_kv_aof_records_total", "counter", "Records appended to the append-only file.", in.Records)
		w("wirebench_kv_aof_rewrites_total", "counter", "Completed rewrites (compactions) of the append-only file.", in.Rewrites)
	}
	if h.opts.Guard.Metrics != nil {
		b = append(b, h.opts.Guard.Metrics()...)
	}
	return b
}

var _ io.Writer = (*httptest.ResponseRecorder)(nil)
