package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/wirebench/wirebench/examples/catalog/catalogpb"
)

// TestSameAnswersBothWays: the REST and gRPC sides answer the same item
// for every id, and both refuse an id past the catalogue's end, so the
// study compares two protocols, not two services.
func TestSameAnswersBothWays(t *testing.T) {
	c := newCatalog(50)
	web := httptest.NewServer(c.routes())
	defer web.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	catalogpb.RegisterCatalogServer(s, c)
	go s.Serve(ln)
	defer s.Stop()
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	client := catalogpb.NewCatalogClient(cc)
	for id := int64(1); id <= 51; id++ {
		resp, err := http.Get(web.URL + "/items/" + strconv.FormatInt(id, 10))
		if err != nil {
			t.Fatal(err)
		}
		var got item
		jerr := json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		g, gerr := client.GetItem(context.Background(), &catalogpb.GetItemRequest{Id: id})
		if id == 51 {
			if resp.StatusCode != http.StatusNotFound || status.Code(gerr) != codes.NotFound {
				t.Errorf("id past the end: REST %d, gRPC %v; want 404 and NotFound", resp.StatusCode, gerr)
			}
			continue
		}
		if resp.StatusCode != 200 || jerr != nil || gerr != nil {
			t.Fatalf("id %d: REST %d %v, gRPC %v", id, resp.StatusCode, jerr, gerr)
		}
		if want := toJSON(g); !reflect.DeepEqual(got, want) || got.ID != id {
			t.Errorf("id %d: REST %+v, gRPC %+v", id, got, want)
		}
	}
	l, err := client.ListItems(context.Background(), &catalogpb.ListItemsRequest{Offset: 45, Limit: 10})
	if err != nil || len(l.Items) != 5 || l.Items[0].Id != 46 {
		t.Errorf("ListItems past the end: %v, %v", l, err)
	}
}
