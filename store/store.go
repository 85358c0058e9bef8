// Package store keeps the reference API's data. Memory is the in-memory
// store every transport shares; later stores (SQLite, an append-only KV
// file) implement the same methods.
package store

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/wirebench/wirebench/api"
)

// Options configures a Memory store; the zero value is the default.
type Options struct {
	// Now returns the creation time of new users; time.Now by default.
	// Tests inject a clock.
	Now func() time.Time
	// NewID returns the ID of a new todo; a random UUID by default.
	NewID func() string
}

// Memory is an in-memory store, safe for concurrent use.
//
// Reads of one item take a read lock. Lists are served from an immutable
// snapshot sorted by id, rebuilt on the first List after a write, so that
// GET /users — the heaviest request of the CRUD scenario — neither copies
// nor sorts while other writers wait, and the encoder works lock-free.
type Memory struct {
	now   func() time.Time
	newID func() string

	users table[int64, api.User]
	todos table[string, api.Todo]
	next  atomic.Int64 // last user id handed out
}

// NewMemory returns an empty store.
func NewMemory(opts Options) *Memory {
	m := &Memory{now: opts.Now, newID: opts.NewID}
	if m.now == nil {
		m.now = time.Now
	}
	if m.newID == nil {
		m.newID = uuid.NewString
	}
	m.users.init()
	m.todos.init()
	return m
}

// CreateUser validates u, assigns its id and creation time, and stores it.
func (m *Memory) CreateUser(u api.User) (api.User, error) {
	if err := u.Validate(); err != nil {
		return api.User{}, err
	}
	u.ID = m.next.Add(1)
	u.CreatedAt = m.now().UTC()
	m.users.put(u.ID, u)
	return u, nil
}

// GetUser returns the user with the given id.
func (m *Memory) GetUser(id int64) (api.User, error) {
	u, ok := m.users.get(id)
	if !ok {
		return api.User{}, fmt.Errorf("user %d: %w", id, api.ErrNotFound)
	}
	return u, nil
}

// ListUsers returns all users ordered by id. The slice is shared and must
// not be modified.
func (m *Memory) ListUsers() []api.User { return m.users.list() }

// UpdateUser replaces the name and email of user id, keeping its id and
// creation time, and returns the stored user.
func (m *Memory) UpdateUser(id int64, u api.User) (api.User, error) {
	if err := u.Validate(); err != nil {
		return api.User{}, err
	}
	out, ok := m.users.update(id, func(old *api.User) { old.Name, old.Email = u.Name, u.Email })
	if !ok {
		return api.User{}, fmt.Errorf("user %d: %w", id, api.ErrNotFound)
	}
	return out, nil
}

// DeleteUser removes user id.
func (m *Memory) DeleteUser(id int64) error {
	if !m.users.delete(id) {
		return fmt.Errorf("user %d: %w", id, api.ErrNotFound)
	}
	return nil
}

// CreateTodo validates t, assigns its id and stores it.
func (m *Memory) CreateTodo(t api.Todo) (api.Todo, error) {
	if err := t.Validate(); err != nil {
		return api.Todo{}, err
	}
	t.ID = m.newID()
	m.todos.put(t.ID, t)
	return t, nil
}

// GetTodo returns the todo with the given id.
func (m *Memory) GetTodo(id string) (api.Todo, error) {
	t, ok := m.todos.get(id)
	if !ok {
		return api.Todo{}, fmt.Errorf("todo %q: %w", id, api.ErrNotFound)
	}
	return t, nil
}

// ListTodos returns all todos ordered by id. The slice is shared and must
// not be modified.
func (m *Memory) ListTodos() []api.Todo { return m.todos.list() }

// UpdateTodo replaces the text and done flag of todo id.
func (m *Memory) UpdateTodo(id string, t api.Todo) (api.Todo, error) {
	if err := t.Validate(); err != nil {
		return api.Todo{}, err
	}
	out, ok := m.todos.update(id, func(old *api.Todo) { old.Text, old.Done = t.Text, t.Done })
	if !ok {
		return api.Todo{}, fmt.Errorf("todo %q: %w", id, api.ErrNotFound)
	}
	return out, nil
}

// DeleteTodo removes todo id.
func (m *Memory) DeleteTodo(id string) error {
	if !m.todos.delete(id) {
		return fmt.Errorf("todo %q: %w", id, api.ErrNotFound)
	}
	return nil
}

// Len returns the number of users and todos.
func (m *Memory) Len() (users, todos int) { return m.users.len(), m.todos.len() }

// table is a map with a lazily rebuilt sorted snapshot.
type table[K cmp.Ordered, V any] struct {
	mu   sync.RWMutex
	m    map[K]V
	snap atomic.Pointer[[]V] // nil after a write
}

func (t *table[K, V]) init() { t.m = make(map[K]V) }

func (t *table[K, V]) get(k K) (V, bool) {
	t.mu.RLock()
	v, ok := t.m[k]
	t.mu.RUnlock()
	return v, ok
}

func (t *table[K, V]) len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.m)
}

func (t *table[K, V]) put(k K, v V) {
	t.mu.Lock()
	t.m[k] = v
	t.snap.Store(nil)
	t.mu.Unlock()
}

func (t *table[K, V]) update(k K, f func(*V)) (V, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.m[k]
	if !ok {
		return v, false
	}
	f(&v)
	t.m[k] = v
	t.snap.Store(nil)
	return v, true
}

func (t *table[K, V]) delete(k K) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.m[k]; !ok {
		return false
	}
	delete(t.m, k)
	t.snap.Store(nil)
	return true
}

// list returns the snapshot, building it if a write invalidated it. The
// snapshot is stored while the read lock is held, so no writer (which needs
// the write lock to invalidate) can slip in between building and storing.
func (t *table[K, V]) list() []V {
	if s := t.snap.Load(); s != nil {
		return *s
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if s := t.snap.Load(); s != nil {
		return *s
	}
	keys := make([]K, 0, len(t.m))
	for k := range t.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := make([]V, len(keys))
	for i, k := range keys {
		vals[i] = t.m[k]
	}
	t.snap.Store(&vals)
	return vals
}
