package store

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/wirebench/wirebench/api"
)

// SeedEpoch is the creation time of the first seeded user.
var SeedEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

var (
	firstNames = []string{"Ada", "Alan", "Barbara", "Claude", "Dennis", "Donald", "Edsger", "Frances", "Grace", "John", "Ken", "Leslie", "Margaret", "Niklaus", "Radia", "Rob", "Sophie", "Tim", "Tony", "Whitfield"}
	lastNames  = []string{"Allen", "Backus", "Cerf", "Dijkstra", "Hamilton", "Hopper", "Kernighan", "Knuth", "Lamport", "Liskov", "Lovelace", "McCarthy", "Perlman", "Pike", "Ritchie", "Shannon", "Thompson", "Turing", "Wirth", "Wilson"}
	todoVerbs  = []string{"Buy", "Write", "Review", "Call", "Fix", "Plan", "Read", "Ship", "Test", "Clean"}
	todoThings = []string{"milk", "the quarterly performance review", "the release notes", "a dentist appointment", "flaky CI job", "team offsite", "the TOON specification", "version 2.0", "load balancer config", "the garage"}
)

// Seed fills an empty store with a deterministic dataset: users 1..users and
// todos whose UUIDs and texts derive from a fixed seed. The same arguments
// give byte-identical list responses in every run, which is what lets a
// study compare trials (fairness rule 1). Creation times carry nanoseconds,
// so a format that drops them shows it.
func (m *Memory) Seed(users, todos int) error {
	if u, t := m.Len(); u != 0 || t != 0 {
		return fmt.Errorf("store: seed needs an empty store (have %d users, %d todos)", u, t)
	}
	rng := rand.New(rand.NewPCG(20251122, 1))
	for i := 1; i <= users; i++ {
		first := firstNames[rng.IntN(len(firstNames))]
		last := lastNames[rng.IntN(len(lastNames))]
		u := api.User{
			ID:        int64(i),
			Name:      first + " " + last,
			Email:     fmt.Sprintf("%s.%s%d@example.com", lower(first), lower(last), i),
			CreatedAt: SeedEpoch.Add(time.Duration(i)*time.Hour + time.Duration(rng.Int64N(int64(time.Second)))),
		}
		m.users.put(u.ID, u)
	}
	m.next.Store(int64(users))
	for range todos {
		id, err := uuid.NewRandomFromReader(rngReader{rng})
		if err != nil {
			return fmt.Errorf("store: seed todo id: %w", err)
		}
		t := api.Todo{
			ID:   id.String(),
			Text: todoVerbs[rng.IntN(len(todoVerbs))] + " " + todoThings[rng.IntN(len(todoThings))],
			Done: rng.IntN(3) == 0,
		}
		m.todos.put(t.ID, t)
	}
	return nil
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// rngReader adapts a seeded generator to io.Reader for uuid.
type rngReader struct{ r *rand.Rand }

func (r rngReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.r.Uint32())
	}
	return len(p), nil
}
