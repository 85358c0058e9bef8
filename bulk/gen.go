package bulk

import (
	"crypto/sha3"
	"encoding/binary"
	"fmt"
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
// and the sum of each row's hash, where a row's hash is the first four
// bytes (big-endian) of the SHA3-256 of its fields as netstrings,
//
//	len(iata_code) ":" iata_code len(name) ":" name len(city) ":" city len(country) ":" country
//
// (lengths in bytes, in decimal: "3:ABC" keeps "ab","c" apart from
// "a","bc"). Two tables with the same Checksum hold the same rows with
// overwhelming probability. It is built so that the table itself can be
// checked without wirebench: the sqlite3 shell has sha3(), and ChecksumSQL
// computes the same line from the airports table. A 32-bit hash keeps the
// sum exact in SQLite's 64-bit integers for any MaxGenerate rows.
type Checksum struct {
	Rows int64  `json:"rows"`
	Sum  uint64 `json:"sum"`
}

// Add counts one row.
func (c *Checksum) Add(a *Airport) {
	var buf [256]byte
	b := buf[:0]
	for _, v := range [4]string{a.IATACode, a.Name, a.City, a.Country} {
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':')
		b = append(b, v...)
	}
	h := sha3.Sum256(b)
	c.Rows++
	c.Sum += uint64(binary.BigEndian.Uint32(h[:4]))
}

// String is "1000 rows, sum 2147918335621": what ChecksumSQL prints.
func (c Checksum) String() string { return fmt.Sprintf("%d rows, sum %d", c.Rows, c.Sum) }

// ChecksumSQL prints a table's Checksum as String does, in the sqlite3
// shell (which has sha3(); plain SQLite does not): `wirebench gen
// --checksum-sql | sqlite3 airports.db`. SQLite has no hex-to-integer
// function, so the hash's first eight hex digits are summed digit by digit.
const ChecksumSQL = `SELECT count(*) || ' rows, sum ' || coalesce(sum(
    (instr('0123456789ABCDEF', substr(h, 1, 1)) - 1) * 268435456 +
    (instr('0123456789ABCDEF', substr(h, 2, 1)) - 1) * 16777216 +
    (instr('0123456789ABCDEF', substr(h, 3, 1)) - 1) * 1048576 +
    (instr('0123456789ABCDEF', substr(h, 4, 1)) - 1) * 65536 +
    (instr('0123456789ABCDEF', substr(h, 5, 1)) - 1) * 4096 +
    (instr('0123456789ABCDEF', substr(h, 6, 1)) - 1) * 256 +
    (instr('0123456789ABCDEF', substr(h, 7, 1)) - 1) * 16 +
    (instr('0123456789ABCDEF', substr(h, 8, 1)) - 1) * 1), 0)
FROM (SELECT hex(sha3(
    length(CAST(iata_code AS BLOB)) || ':' || iata_code ||
    length(CAST(name AS BLOB)) || ':' || name ||
    length(CAST(city AS BLOB)) || ':' || city ||
    length(CAST(country AS BLOB)) || ':' || country, 256)) AS h
  FROM airports);
`

// GeneratedChecksum is Generate's checksum without encoding anything.
func GeneratedChecksum(n int) Checksum {
	var c Checksum
	for i := range n {
		a := Generated(i)
		c.Add(&a)
	}
	return c
}
