package bulk

import (
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
)

// MaxGenerate bounds Generate's n: keys are a bijection of the index onto
// six letters (26^6 ≈ 3.1e8 codes).
const MaxGenerate = 300_000_000

const keySpace = 26 * 26 * 26 * 26 * 26 * 26

var (
	cities    = []string{"Lisbon", "São Paulo", "Zürich", "Reykjavík", "Kraków", "Osaka", "Nairobi", "Québec", "Auckland", "Chicago", "Dubai", "Tromsø"}
	countries = []string{"Portugal", "Brazil", "Switzerland", "Iceland", "Poland", "Japan", "Kenya", "Canada", "New Zealand", "United States", "United Arab Emirates", "Norway"}
)

// Generated is the i-th airport of the deterministic dataset. Keys are
// unique for i < MaxGenerate and come in a scrambled order (an affine
// bijection of i), so inserts land all over the primary-key index as real
// data would; some names carry commas, quotes and non-ASCII letters, so
// every format's quoting is exercised.
func Generated(i int) Airport {
	x := (uint64(i)*2654435761 + 12345) % keySpace // 2654435761 is coprime with 26
	var k [6]byte
	for j := 5; j >= 0; j-- {
		k[j] = byte('A' + x%26)
		x /= 26
	}
	code := string(k[:])
	c := i % len(cities)
	name := cities[c] + " " + code + " International"
	switch i % 7 {
	case 3:
		name = cities[c] + ", \"" + code + "\" Field"
	case 5:
		name = "Aeroporto " + cities[c] + " – " + code
	}
	return Airport{
		IATACode: code,
		Name:     name,
		City:     cities[c] + " " + strconv.Itoa(i%997),
		Country:  countries[(i/len(cities))%len(countries)],
	}
}

// Generate writes airports 0..n-1 to w in format f, one at a time, and
// returns their checksum.
func Generate(w io.Writer, f string, n int) (Checksum, error) {
	var sum Checksum
	if n < 0 || n > MaxGenerate {
		return sum, fmt.Errorf("bulk: generate %d records: want 0..%d", n, MaxGenerate)
	}
	enc, err := NewEncoder(f, w, n)
	if err != nil {
		return sum, err
	}
	for i := range n {
		a := Generated(i)
		if err := enc.Write(&a); err != nil {
			return sum, err
		}
		sum.Add(&a)
	}
	return sum, enc.Close()
}

// Checksum identifies a set of rows regardless of their order: the count
// and the sum (mod 2^64) of each row's FNV-1a hash. Two tables with the
// same Checksum hold the same rows with overwhelming probability.
type Checksum struct {
	Rows int64  `json:"rows"`
	Sum  uint64 `json:"sum"`
}

// Add counts one row.
func (c *Checksum) Add(a *Airport) {
	h := fnv.New64a()
	for _, v := range [4]string{a.IATACode, a.Name, a.City, a.Country} {
		io.WriteString(h, v)
		h.Write([]byte{0}) // NUL and the length below keep "ab","c" apart from "a","bc"
		io.WriteString(h, strconv.Itoa(len(v)))
	}
	c.Rows++
	c.Sum += h.Sum64()
}

func (c Checksum) String() string { return fmt.Sprintf("%d rows, sum %016x", c.Rows, c.Sum) }

// GeneratedChecksum is Generate's checksum without encoding anything.
func GeneratedChecksum(n int) Checksum {
	var c Checksum
	for i := range n {
		a := Generated(i)
		c.Add(&a)
	}
	return c
}
