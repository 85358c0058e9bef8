// Package typo finds the name a user probably meant: the edit distance
// behind every "did you mean" of the command line, the study files, the
// flow files and the link specs.
package typo

// maxLen bounds the names compared: past it a string is no typo of a
// name, and the quadratic work is spared.
const maxLen = 64

// Distance is the Levenshtein distance between a and b in runes, counting
// an adjacent transposition as one edit (Damerau's restricted form,
// optimal string alignment): "htpt" is one slip from "http", "tirals"
// one from "trials". Strings over 64 runes are 1<<20 apart.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > maxLen || len(rb) > maxLen {
		return 1 << 20
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range rb {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
