package resp

import (
	"fmt"
	"testing"

	"github.com/wirebench/wirebench/kv"
)

// BenchmarkPipelinedGet is the user-space half of redis-benchmark -P 16
// -t get -d 128 -r 10000 on one connection: parse a read of 16 GETs,
// execute them, build the replies (no sockets). go test ./kv/resp -run X
// -bench PipelinedGet -cpuprofile cpu.out profiles it.
func BenchmarkPipelinedGet(b *testing.B) {
	st, err := kv.Open(kv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	val := make([]byte, 128)
	for i := range 10000 {
		if _, _, err := st.Set(fmt.Sprintf("key:%012d", i), val, kv.SetOpts{}); err != nil {
			b.Fatal(err)
		}
	}
	var in []byte
	for i := range 16 {
		k := fmt.Sprintf("key:%012d", i*613%10000)
		in = fmt.Appendf(in, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(k), k)
	}
	srv := &Server{st: st}
	sess := srv.newSession()
	rd := reqReader{buf: make([]byte, 16<<10)}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		rd.w = copy(rd.buf, in)
		rd.r = 0
		for {
			args, err := rd.next()
			if err != nil {
				b.Fatal(err)
			}
			if args == nil {
				break
			}
			sess.Exec(args)
		}
		sess.finish()
		if len(sess.r.b) != 16*(len(val)+6+2) {
			b.Fatalf("%d reply bytes", len(sess.r.b))
		}
		sess.r.b = sess.r.b[:0]
	}
}
