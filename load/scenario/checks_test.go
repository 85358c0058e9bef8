package scenario_test

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/results"
)

// Fairness rule 2: every response is decoded and checked. These tests
// prove it site by site: a server answers with the right status and the
// wrong content, and the run must count exactly the failure that check
// names, for every request the corruption reaches. Each case is paired
// with its uncorrupted baseline, which must pass: a check that always
// fails is as useless as one that never does.

// The seeded dataset of every case.
const seedUsers = 5

// Corruptions, one field at a time.
var (
	bumpID     = func(u *api.User) { u.ID++ }
	renameUser = func(u *api.User) { u.Name += "x" }
	reEmail    = func(u *api.User) { u.Email = "x" + u.Email }
	laterBy1ns = func(u *api.User) { u.CreatedAt = u.CreatedAt.Add(time.Nanosecond) }
	zeroID     = func(u *api.User) { u.ID = 0 }
	zeroTime   = func(u *api.User) { u.CreatedAt = time.Time{} }
)

// addUsers corrupts a list by k extra users (k < 0 drops users).
func addUsers(k int) func(*api.UserList) {
	return func(l *api.UserList) {
		if k < 0 {
			l.Users = l.Users[:len(l.Users)+k]
			return
		}
		for i := range k {
			l.Users = append(l.Users, api.User{ID: int64(1000 + i), Name: "ghost", Email: "g@h.st"})
		}
	}
}

type checkCase struct {
	name     string
	scenario string
	c        corruption
	n        int64 // requests, one VU
	want     map[string]int64
}

// The crud scenario cycles list, create, get, update, delete: 10 requests
// are two of each. The create scenario alternates create and delete.
func checkCases() []checkCase {
	const n = 10
	dataset := "check: user differs from the dataset"
	created := "check: created user"
	return []checkCase{
		// echo
		{"echo/baseline", scenario.Echo, corruption{}, n, nil},
		{"echo/message", scenario.Echo, corruption{reply: replyEcho, echo: func(e *api.EchoResponse) { e.Message += "!" }}, n,
			map[string]int64{"check: echo message": n}},
		// get: every field of the user is compared with the snapshot
		{"get/baseline", scenario.Get, corruption{}, n, nil},
		{"get/id", scenario.Get, corruption{reply: replyGet, user: bumpID}, n, map[string]int64{dataset: n}},
		{"get/name", scenario.Get, corruption{reply: replyGet, user: renameUser}, n, map[string]int64{dataset: n}},
		{"get/email", scenario.Get, corruption{reply: replyGet, user: reEmail}, n, map[string]int64{dataset: n}},
		{"get/created_at", scenario.Get, corruption{reply: replyGet, user: laterBy1ns}, n, map[string]int64{dataset: n}},
		// list: exactly the snapshot's count
		{"list/baseline", scenario.List, corruption{}, n, nil},
		{"list/one more", scenario.List, corruption{reply: replyList, skip: 1, list: addUsers(1)}, n,
			map[string]int64{"check: list count differs from the dataset": n}},
		{"list/one less", scenario.List, corruption{reply: replyList, skip: 1, list: addUsers(-1)}, n,
			map[string]int64{"check: list count differs from the dataset": n}},
		// crud's list: between the snapshot and snapshot + VUs (one VU here)
		{"crud/baseline", scenario.CRUD, corruption{}, n, nil},
		{"crud/list one less", scenario.CRUD, corruption{reply: replyList, skip: 1, list: addUsers(-1)}, n,
			map[string]int64{"check: list count outside the dataset's bounds": 2}},
		{"crud/list one more is one VU's user", scenario.CRUD, corruption{reply: replyList, skip: 1, list: addUsers(1)}, n, nil},
		{"crud/list two more", scenario.CRUD, corruption{reply: replyList, skip: 1, list: addUsers(2)}, n,
			map[string]int64{"check: list count outside the dataset's bounds": 2}},
		// crud's get and update compare with the user created
		{"crud/got name", scenario.CRUD, corruption{reply: replyGet, user: renameUser}, n,
			map[string]int64{"check: got user differs from the created one": 2}},
		{"crud/updated name", scenario.CRUD, corruption{reply: replyUpdate, user: renameUser}, n,
			map[string]int64{"check: updated user": 2}},
		{"crud/updated email", scenario.CRUD, corruption{reply: replyUpdate, user: reEmail}, n,
			map[string]int64{"check: updated user": 2}},
		{"crud/updated created_at", scenario.CRUD, corruption{reply: replyUpdate, user: laterBy1ns}, n,
			map[string]int64{"check: updated user": 2}},
		{"crud/updated id", scenario.CRUD, corruption{reply: replyUpdate, user: bumpID}, n,
			map[string]int64{"check: updated user": 2}},
		// create: every field of the created user; five creates in ten
		{"create/baseline", scenario.Create, corruption{}, n, nil},
		{"create/name", scenario.Create, corruption{reply: replyCreate, user: renameUser}, n, map[string]int64{created: 5}},
		{"create/email", scenario.Create, corruption{reply: replyCreate, user: reEmail}, n, map[string]int64{created: 5}},
		{"create/created_at zero", scenario.Create, corruption{reply: replyCreate, user: zeroTime}, n, map[string]int64{created: 5}},
		// id 0 also sends the delete to /users/0, which does not exist
		{"create/id zero", scenario.Create, corruption{reply: replyCreate, user: zeroID}, n,
			map[string]int64{created: 5, "status 404": 5}},
	}
}

// runCase runs c's scenario against a fresh corrupted API and returns the
// failures counted, after checking the run's own accounting.
func runCase(t *testing.T, c checkCase, transport string) map[string]int64 {
	t.Helper()
	w := startWrongAPI(t, seedUsers, c.c)
	url := "http://" + w.HTTPAddr
	format := "json"
	if transport == scenario.TransportGRPC {
		url, format = w.GRPCAddr, "protobuf"
	}
	sc, err := scenario.New(scenario.Options{Name: c.scenario, Options: conn.Options{URL: url, Transport: transport, Timeout: 5 * time.Second}, Format: format})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.(interface{ Close() error }).Close() })
	r, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: c.n}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, k := range r.Failures {
		sum += k
	}
	if r.Requests != c.n || r.Failed != sum {
		t.Fatalf("%d requests (want %d), %d failed, failures %v", r.Requests, c.n, r.Failed, r.Failures)
	}
	return r.Failures
}

func sameCounts(got, want map[string]int64) bool {
	if len(got) == 0 && len(want) == 0 {
		return true
	}
	return maps.Equal(got, want)
}

func TestChecksCountWrongContentREST(t *testing.T) {
	for _, transport := range []string{conn.HTTP1, conn.H2C} {
		for _, c := range checkCases() {
			t.Run(transport+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				if got := runCase(t, c, transport); !sameCounts(got, c.want) {
					t.Errorf("failures %v, want %v", got, c.want)
				}
			})
		}
	}
}

func TestChecksCountWrongContentGRPC(t *testing.T) {
	for _, c := range checkCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if n, ok := c.want["status 404"]; ok { // gRPC's word for it
				c.want = maps.Clone(c.want)
				delete(c.want, "status 404")
				c.want["grpc NotFound"] = n
			}
			if got := runCase(t, c, scenario.TransportGRPC); !sameCounts(got, c.want) {
				t.Errorf("failures %v, want %v", got, c.want)
			}
		})
	}
}

// TestExchangeFailuresAreCounted: what the client itself must refuse before
// any check runs — an unexpected status, a body that does not decode, a
// content coding nobody asked for, a gRPC error.
func TestExchangeFailuresAreCounted(t *testing.T) {
	const n = 6
	for _, c := range []struct {
		name, transport, scenario string
		c                         corruption
		want                      map[string]int64
	}{
		{"200 for a create", conn.HTTP1, scenario.Create, corruption{reply: replyCreate, status: http.StatusOK},
			map[string]int64{"status 200": n}}, // a failed create restarts the iteration: every request is a create
		{"undecodable user", conn.HTTP1, scenario.Get, corruption{reply: replyGet, body: []byte(`{"id":`)},
			map[string]int64{"decode json-fast body": n}},
		{"undecodable user h2c", conn.H2C, scenario.Get, corruption{reply: replyGet, body: []byte(`{"id":`)},
			map[string]int64{"decode json-fast body": n}},
		{"gzip unasked", conn.HTTP1, scenario.Echo, corruption{reply: replyEcho, gzipUnask: true},
			map[string]int64{"decompress body": n}},
		{"gzip unasked h2c", conn.H2C, scenario.Echo, corruption{reply: replyEcho, gzipUnask: true},
			map[string]int64{"decompress body": n}},
		{"grpc error", scenario.TransportGRPC, scenario.Get, corruption{reply: replyGet, code: codes.DataLoss},
			map[string]int64{"grpc DataLoss": n}},
		{"malformed reply", conn.HTTP1, scenario.Echo, corruption{reply: replyEcho, hangUp: true},
			map[string]int64{"malformed response": n}},
		{"reset stream", conn.H2C, scenario.Echo, corruption{reply: replyEcho, hangUp: true}, nil}, // counted below
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := runCase(t, checkCase{c.name, c.scenario, c.c, n, c.want}, c.transport)
			if c.c.hangUp && c.want == nil { // net/http's words for a reset vary: count them
				var sum int64
				for r, k := range got {
					sum += k
					if strings.HasPrefix(r, "status ") { // the exchange's error, not a status never received
						t.Errorf("failure %q", r)
					}
				}
				if sum != n {
					t.Errorf("failures %v, want %d of them", got, n)
				}
				return
			}
			if !sameCounts(got, c.want) {
				t.Errorf("failures %v, want %v", got, c.want)
			}
		})
	}
}
