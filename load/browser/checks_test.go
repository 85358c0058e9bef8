package browser

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/pb/pbconnect"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/webbench"
)

// The browser cells' checks run in the page (browser/src/bench.ts: the id
// of every user fetched, the order of a list, the status); the engine
// reads what the page reports. These tests hold both ends: a page that
// reports failed calls must make failed requests with the page's reason,
// a page whose run rejects or never ends must too, and the real page
// against a server that answers the right status with the wrong user or
// an unordered list must report it. scripts/mutants/browser-checks.txt
// switches each of the engine's checks off and blanks each reason.

// startServer serves h on 127.0.0.1:0 and returns http://host:port.
func startServer(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &http.Server{Handler: h}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return "http://" + ln.Addr().String()
}

// runPage runs kind for batches batches of 3 calls against the page at
// url/bench/ and returns the result.
func runPage(t *testing.T, url, kind string, batches int64, timeout time.Duration) *results.Load {
	t.Helper()
	sc, err := New(Options{Kind: kind, URL: url, Batch: 3, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: batches}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fakePage is a /bench/ page whose run() resolves to what the test says
// (a JavaScript expression of the options o), or rejects, or never ends.
func fakePage(run string) http.Handler {
	page := `<!doctype html><script>window.wirebench = {ready: true, run: async (o) => ` + run + `};</script>`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, page)
	})
}

func TestBrowserPageReportsCounted(t *testing.T) {
	needChromium(t)
	if testing.Short() {
		t.Skip("starts chromium (a few seconds per case)")
	}
	for _, c := range []struct {
		name    string
		run     string
		timeout time.Duration
		want    map[string]int64
		failed  int64 // calls the page reported failed
	}{
		{"all good", `({kind: o.kind, latencies_us: [100, 200, 300], items: 3, failed: 0, first_error: ""})`, 10 * time.Second, nil, 0},
		{"a check failed", `({kind: o.kind, latencies_us: [100, 200], items: 2, failed: 1, first_error: "Error: got user 3, want 2\n    at checkUser"})`,
			10 * time.Second, map[string]int64{"in page: Error: got user 3, want 2": 2}, 2},
		{"run rejects", `{ throw new Error("no such kind") }`, 10 * time.Second, map[string]int64{"browser": 2}, 0},
		{"run never ends", `new Promise(() => {})`, 3 * time.Second, map[string]int64{"timeout": 2}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := runPage(t, startServer(t, fakePage(c.run)), "fetch-json", 2, c.timeout)
			got := map[string]int64{}
			for r, n := range res.Failures {
				if strings.HasPrefix(r, "browser: ") { // chromedp's words follow
					r = "browser"
				}
				got[r] += n
			}
			if len(got) == 0 {
				got = nil
			}
			if !maps.Equal(got, c.want) {
				t.Errorf("failures %v, want %v", res.Failures, c.want)
			}
			if c.want == nil || c.failed > 0 {
				if res.Failed != c.failed || res.Requests != 6 {
					t.Errorf("%d calls, %d failed; want 6 and %d", res.Requests, res.Failed, c.failed)
				}
			}
		})
	}
}

// wrongUsers is the API behind the real page, wrong as the test says: the
// user of id+1 for GET /users/{id} and Get, the list out of order.
type wrongUsers struct {
	pbconnect.UnimplementedUserServiceHandler
	shift int64 // added to the id asked
	swap  bool  // the stream's second and third users swapped
}

func (f *wrongUsers) user(id int64) *pb.User {
	return &pb.User{Id: id, Name: fmt.Sprint("user ", id), Email: fmt.Sprintf("u%d@example.com", id)}
}

func (f *wrongUsers) Get(_ context.Context, r *connect.Request[pb.GetUserRequest]) (*connect.Response[pb.User], error) {
	return connect.NewResponse(f.user(r.Msg.Id + f.shift)), nil
}

func (f *wrongUsers) Stream(_ context.Context, _ *connect.Request[pb.ListUsersRequest], s *connect.ServerStream[pb.User]) error {
	ids := []int64{1, 2, 3, 4}
	if f.swap {
		ids[1], ids[2] = ids[2], ids[1]
	}
	for _, id := range ids {
		if err := s.Send(f.user(id)); err != nil {
			return err
		}
	}
	return nil
}

func (f *wrongUsers) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(pbconnect.NewUserServiceHandler(f))
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%d,"name":"u","email":"u@example.com","created_at":"2026-01-01T00:00:00Z"}`, id+f.shift)
	})
	return webbench.New(mux, webbench.Options{})
}

// TestBrowserRealPageChecks: the real page (webbench's bundle of
// browser/src/bench.ts) against an API that answers 200 with the wrong
// user or an unordered list: every call fails, with the page's reason.
func TestBrowserRealPageChecks(t *testing.T) {
	needChromium(t)
	if testing.Short() {
		t.Skip("starts chromium (a few seconds per case)")
	}
	for _, c := range []struct {
		name string
		kind string
		api  *wrongUsers
		want string // the reason, "" for none
	}{
		{"right", "fetch-json", &wrongUsers{}, ""},
		{"wrong user", "fetch-json", &wrongUsers{shift: 1}, "in page: Error: got user 2, want 1"},
		{"wrong user", "grpc-web", &wrongUsers{shift: 1}, "in page: Error: got user 2, want 1"},
		{"right", "connect-stream", &wrongUsers{}, ""},
		{"out of order", "connect-stream", &wrongUsers{swap: true}, "in page: Error: users out of order"},
	} {
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			res := runPage(t, startServer(t, c.api.handler()), c.kind, 2, 20*time.Second)
			var want map[string]int64
			failed := int64(0)
			if c.want != "" {
				want, failed = map[string]int64{c.want: 2}, 6
			}
			if !(maps.Equal(res.Failures, want) || len(res.Failures)+len(want) == 0) || res.Failed != failed || res.Requests != 6 {
				t.Errorf("%d calls, %d failed: %v; want %d failed: %v", res.Requests, res.Failed, res.Failures, failed, want)
			}
		})
	}
}
