// Command catalog is a user's own small service, outside wirebench's
// reference API, written as its users would write it: a stock grpc-go
// server (with server reflection) and a net/http server with
// encoding/json answering the same two questions from the same data.
// docs/grpc.md compares them with one study file (study.yaml here).
//
//	go build -o catalog ./examples/catalog
//	./catalog --http 127.0.0.1:8080 --grpc 127.0.0.1:9090
//	curl http://127.0.0.1:8080/items/7
//	grpcurl -plaintext -d '{"id": 7}' 127.0.0.1:9090 shop.v1.Catalog/GetItem
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/wirebench/wirebench/examples/catalog/catalogpb"
)

func main() {
	httpAddr := flag.String("http", "127.0.0.1:8080", "REST listen `address` (empty: none)")
	grpcAddr := flag.String("grpc", "127.0.0.1:9090", "gRPC listen `address` (empty: none)")
	n := flag.Int("items", 1000, "items in the catalogue")
	flag.Parse()
	c := newCatalog(*n)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 2)
	if *grpcAddr != "" {
		ln, err := net.Listen("tcp", *grpcAddr)
		if err != nil {
			log.Fatal(err)
		}
		s := grpc.NewServer()
		catalogpb.RegisterCatalogServer(s, c)
		reflection.Register(s)
		go func() { errc <- s.Serve(ln) }()
		defer s.Stop()
		fmt.Println("grpc", ln.Addr())
	}
	if *httpAddr != "" {
		ln, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			log.Fatal(err)
		}
		srv := &http.Server{Handler: c.routes()}
		go func() { errc <- srv.Serve(ln) }()
		defer srv.Close()
		fmt.Println("http", ln.Addr())
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		log.Fatal(err)
	}
}

// catalog holds the items, made up deterministically from their ids.
type catalog struct {
	catalogpb.UnimplementedCatalogServer
	items []*catalogpb.Item
}

func newCatalog(n int) *catalog {
	c := &catalog{items: make([]*catalogpb.Item, n)}
	tags := []string{"new", "sale", "eco", "gift", "bulk"}
	for i := range n {
		id := int64(i + 1)
		c.items[i] = &catalogpb.Item{
			Id:         id,
			Name:       fmt.Sprintf("Item %d", id),
			PriceCents: 199 + id*37%10_000,
			Tags:       tags[:1+i%len(tags)],
			InStock:    i%7 != 0,
		}
	}
	return c
}

func (c *catalog) item(id int64) (*catalogpb.Item, bool) {
	if id < 1 || id > int64(len(c.items)) {
		return nil, false
	}
	return c.items[id-1], true
}

func (c *catalog) page(offset, limit int32) []*catalogpb.Item {
	if limit <= 0 || limit > 100 {
		limit = 20
	}
	lo := min(max(int(offset), 0), len(c.items))
	return c.items[lo:min(lo+int(limit), len(c.items))]
}

// GetItem and ListItems: the gRPC side.
func (c *catalog) GetItem(_ context.Context, r *catalogpb.GetItemRequest) (*catalogpb.Item, error) {
	it, ok := c.item(r.GetId())
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no item %d", r.GetId())
	}
	return it, nil
}

func (c *catalog) ListItems(_ context.Context, r *catalogpb.ListItemsRequest) (*catalogpb.ItemList, error) {
	return &catalogpb.ItemList{Items: c.page(r.GetOffset(), r.GetLimit())}, nil
}

// item is the REST side's JSON, the same fields under the names a REST
// API would give them.
type item struct {
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	PriceCents int64    `json:"price_cents"`
	Tags       []string `json:"tags"`
	InStock    bool     `json:"in_stock"`
}

func toJSON(it *catalogpb.Item) item {
	return item{ID: it.Id, Name: it.Name, PriceCents: it.PriceCents, Tags: it.Tags, InStock: it.InStock}
}

func (c *catalog) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		it, ok := c.item(id)
		if err != nil || !ok {
			http.Error(w, "no such item", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(toJSON(it))
	})
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, r *http.Request) {
		offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		page := c.page(int32(offset), int32(limit))
		out := struct {
			Items []item `json:"items"`
		}{Items: make([]item, len(page))}
		for i, it := range page {
			out.Items[i] = toJSON(it)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	return mux
}
