package scenario

import (
	"context"
	"time"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/load"
)

// Name names the scenario in results: "crud", "echo", ...
func (s *apiScenario) Name() string { return s.o.Name }

// apiVU is what every reference-API VU has.
type apiVU struct {
	s  *apiScenario
	c  apiClient
	id int
}

func (v *apiVU) Close() error { v.c.close(); return nil }

// echoVU: POST /echo; the message must be first+second (the Fiber seed's
// check that the decoder actually ran).
type echoVU struct {
	apiVU
	out api.EchoResponse
}

func (v *echoVU) Do(ctx context.Context, o *load.Outcome) {
	if v.c.echo(ctx, &v.s.echoReq, &v.out, o) && v.out.Message != v.s.echoWant {
		o.Fail = "check: echo message"
	}
}

// getVU cycles through the seeded users; each must equal the snapshot.
type getVU struct {
	apiVU
	next int
	out  api.User
}

func (v *getVU) Do(ctx context.Context, o *load.Outcome) {
	want := &v.s.seed.Users[v.next%len(v.s.seed.Users)]
	v.next++
	if v.c.getUser(ctx, want.ID, &v.out, o) && !sameUser(&v.out, want) {
		o.Fail = "check: user differs from the dataset"
	}
}

// listVU: the list must hold exactly the seeded users (rule 1: nothing
// else writes in this scenario).
type listVU struct {
	apiVU
}

func (v *listVU) Do(ctx context.Context, o *load.Outcome) {
	if n, ok := v.c.countUsers(ctx, o); ok && n != len(v.s.seed.Users) {
		o.Fail = "check: list count differs from the dataset"
	}
}

// crudVU runs the TOON seed's iteration one request per Do: list, create,
// get, update, delete (or, for the create scenario, create and delete).
// What it creates it deletes, on failure too, so the dataset stays fixed.
type crudVU struct {
	apiVU
	create           bool // the create scenario: create, delete
	step             int
	newUser, changed encoded[api.User]
	created, out     api.User
	pending          int64 // id created and not yet deleted
}

const (
	opList = iota
	opCreate
	opGet
	opUpdate
	opDelete
)

func (v *crudVU) Do(ctx context.Context, o *load.Outcome) {
	op := v.step
	if v.create {
		op = opCreate + 3*v.step // 0 → create, 1 → delete
		o.Op = v.step
	} else {
		o.Op = op
	}
	switch op {
	case opList:
		// Other VUs have created at most one user each that they have not
		// deleted yet, so the count lies within seed..seed+VUs.
		lo := len(v.s.seed.Users)
		if n, ok := v.c.countUsers(ctx, o); ok {
			if n < lo || n > lo+int(v.s.vus.Load()) {
				o.Fail = "check: list count outside the dataset's bounds"
			}
		}
	case opCreate:
		if !v.c.createUser(ctx, &v.newUser, &v.created, o) {
			v.restart()
			return
		}
		v.pending = v.created.ID
		if v.created.ID == 0 || v.created.Name != v.newUser.v.Name || v.created.Email != v.newUser.v.Email || v.created.CreatedAt.IsZero() {
			o.Fail = "check: created user"
		}
	case opGet:
		if v.c.getUser(ctx, v.pending, &v.out, o) && !sameUser(&v.out, &v.created) {
			o.Fail = "check: got user differs from the created one"
		}
	case opUpdate:
		if v.c.updateUser(ctx, v.pending, &v.changed, &v.out, o) {
			want := v.created
			want.Name, want.Email = v.changed.v.Name, v.changed.v.Email
			if !sameUser(&v.out, &want) { // PUT keeps id and created_at
				o.Fail = "check: updated user"
			}
		}
	case opDelete:
		if v.c.deleteUser(ctx, v.pending, o) {
			v.pending = 0
		}
		v.restart()
		return
	}
	v.step++
}

func (v *crudVU) restart() { v.step = 0 }

// Close deletes a user left by an unfinished iteration (not recorded).
func (v *crudVU) Close() error {
	if v.pending != 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var o load.Outcome
		v.c.deleteUser(ctx, v.pending, &o)
	}
	return v.apiVU.Close()
}

func sameUser(a, b *api.User) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Email == b.Email && a.CreatedAt.Equal(b.CreatedAt)
}
