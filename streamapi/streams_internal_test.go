package streamapi

import (
	"net/http"
	"testing"

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
}
