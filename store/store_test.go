package store

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/api"
)

func TestSeedIsDeterministic(t *testing.T) {
	a, b := NewMemory(Options{}), NewMemory(Options{})
	if err := a.Seed(50, 40); err != nil {
		t.Fatal(err)
	}
	if err := b.Seed(50, 40); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.ListUsers(), b.ListUsers()) || !reflect.DeepEqual(a.ListTodos(), b.ListTodos()) {
		t.Fatal("two seeds with the same arguments differ")
	}
	users := a.ListUsers()
	if len(users) != 50 || len(a.ListTodos()) != 40 {
		t.Fatalf("got %d users, %d todos", len(users), len(a.ListTodos()))
	}
	for i, u := range users {
		if u.ID != int64(i+1) {
			t.Fatalf("users[%d].ID = %d, want ordered ids", i, u.ID)
		}
		if err := u.Validate(); err != nil {
			t.Fatalf("seeded user %d invalid: %v", u.ID, err)
		}
	}
	todos := a.ListTodos()
	for i := 1; i < len(todos); i++ {
		if todos[i-1].ID >= todos[i].ID {
			t.Fatalf("todos not ordered by id at %d", i)
		}
	}
	if err := a.Seed(1, 1); err == nil {
		t.Error("seeding a non-empty store succeeded")
	}
	if u, _ := a.CreateUser(api.User{Name: "n", Email: "n@x.io"}); u.ID != 51 {
		t.Errorf("first id after seed = %d, want 51", u.ID)
	}
}

func TestUserLifecycle(t *testing.T) {
	clock := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	m := NewMemory(Options{Now: func() time.Time { return clock }})
	u, err := m.CreateUser(api.User{ID: 99, Name: "Ada", Email: "ada@example.com", CreatedAt: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != 1 || !u.CreatedAt.Equal(clock) {
		t.Fatalf("server must assign id and created_at, got %+v", u)
	}
	if got := m.ListUsers(); len(got) != 1 {
		t.Fatalf("list = %v", got)
	}
	up, err := m.UpdateUser(u.ID, api.User{Name: "Ada L", Email: "ada@l.org"})
	if err != nil {
		t.Fatal(err)
	}
	if up.ID != u.ID || !up.CreatedAt.Equal(clock) || up.Name != "Ada L" {
		t.Fatalf("update must keep id and created_at: %+v", up)
	}
	if got, _ := m.GetUser(u.ID); got != up {
		t.Fatalf("get after update = %+v", got)
	}
	if got := m.ListUsers(); got[0] != up {
		t.Fatalf("list snapshot is stale after update: %+v", got)
	}
	if err := m.DeleteUser(u.ID); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{m.DeleteUser(u.ID), func() error { _, err := m.GetUser(u.ID); return err }(),
		func() error { _, err := m.UpdateUser(u.ID, up); return err }()} {
		if !errors.Is(err, api.ErrNotFound) {
			t.Errorf("after delete: %v, want ErrNotFound", err)
		}
	}
}

func TestInvalidInputChangesNothing(t *testing.T) {
	m := NewMemory(Options{})
	if err := m.Seed(3, 3); err != nil {
		t.Fatal(err)
	}
	before := append([]api.User(nil), m.ListUsers()...)
	bad := []api.User{{Name: "", Email: "a@b.co"}, {Name: "x", Email: "nope"}, {Name: "x", Email: "a@b"}}
	for _, u := range bad {
		if _, err := m.CreateUser(u); !errors.Is(err, api.ErrInvalid) {
			t.Errorf("CreateUser(%+v) = %v, want ErrInvalid", u, err)
		}
		if _, err := m.UpdateUser(1, u); !errors.Is(err, api.ErrInvalid) {
			t.Errorf("UpdateUser(%+v) = %v, want ErrInvalid", u, err)
		}
	}
	if _, err := m.CreateTodo(api.Todo{Text: " "}); !errors.Is(err, api.ErrInvalid) {
		t.Errorf("blank todo: %v", err)
	}
	if !reflect.DeepEqual(before, m.ListUsers()) {
		t.Fatal("failed writes changed the store")
	}
	if u, tt := m.Len(); u != 3 || tt != 3 {
		t.Fatalf("Len = %d, %d", u, tt)
	}
}

// TestConcurrentCRUD runs writers and list readers together; with -race it
// checks the snapshot protocol.
func TestConcurrentCRUD(t *testing.T) {
	m := NewMemory(Options{})
	if err := m.Seed(10, 0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				u, err := m.CreateUser(api.User{Name: "w", Email: "w@x.io"})
				if err != nil {
					t.Error(err)
					return
				}
				if i%2 == w%2 {
					if err := m.DeleteUser(u.ID); err != nil {
						t.Error(err)
					}
				}
				l := m.ListUsers()
				for j := 1; j < len(l); j++ {
					if l[j-1].ID >= l[j].ID {
						t.Error("unordered snapshot")
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if n, _ := m.Len(); n != 10+4*100 || len(m.ListUsers()) != n {
		t.Fatalf("Len = %d, list %d; want %d", n, len(m.ListUsers()), 410)
	}
}

// BenchmarkGetParallel measures the read path under contention (the lock
// is an RWMutex; see the commit for the comparison with sync.Map).
func BenchmarkGetParallel(b *testing.B) {
	m := NewMemory(Options{})
	if err := m.Seed(1000, 0); err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		id := int64(1)
		for pb.Next() {
			if _, err := m.GetUser(id); err != nil {
				b.Fatal(err)
			}
			id = id%1000 + 1
		}
	})
}

func BenchmarkListAfterWrite(b *testing.B) {
	m := NewMemory(Options{})
	if err := m.Seed(100, 0); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		u, _ := m.CreateUser(api.User{Name: "n", Email: "n@x.io"})
		_ = m.ListUsers()
		_ = m.DeleteUser(u.ID)
		_ = m.ListUsers()
	}
}
