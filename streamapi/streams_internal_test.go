package streamapi

import (
	"net/http"
	"testing"

	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/pb/pbconnect"
	"github.com/wirebench/wirebench/store"
)

// The stream bounds apply to exactly the streaming procedures.
func TestStreamingProcedures(t *testing.T) {
	h := New(store.NewMemory(store.Options{}), http.NotFoundHandler(), Options{})
	want := []string{
		pbconnect.UserServiceStreamProcedure, pbconnect.UserServiceCreateManyProcedure,
		pbconnect.TodoServiceStreamProcedure, pbconnect.TodoServiceCreateManyProcedure,
		pbconnect.EchoServiceChatProcedure,
	}
	for _, p := range want {
		if !h.streams[p] {
			t.Errorf("%s is not bounded as a stream", p)
		}
	}
	if len(h.streams) != len(want) || h.streams[pbconnect.UserServiceGetProcedure] {
		t.Errorf("streams %v, want exactly %v", h.streams, want)
	}
	// New lists them from the gRPC service descriptions: the file's own
	// descriptor must agree, so that a service added to the proto file
	// and not to New's list fails here.
	svcs := pb.File_wirebench_proto.Services()
	n := 0
	for i := range svcs.Len() {
		ms := svcs.Get(i).Methods()
		for j := range ms.Len() {
			if m := ms.Get(j); m.IsStreamingClient() || m.IsStreamingServer() {
				n++
				if p := "/" + string(svcs.Get(i).FullName()) + "/" + string(m.Name()); !h.streams[p] {
					t.Errorf("the descriptor's streaming %s is not bounded", p)
				}
			}
		}
	}
	if n != len(h.streams) {
		t.Errorf("the descriptor has %d streaming methods, New bounds %d", n, len(h.streams))
	}
}
