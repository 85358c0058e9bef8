package report

import (
	"strings"
	"testing"
)

// TestBarFrameFitsLabels: the left margin holds the longest label and the
// right margin the longest value, however long they are.
func TestBarFrameFitsLabels(t *testing.T) {
	tests := []struct {
		name           string
		labels, values []string
	}{
		{"short", []string{"a", "b"}, []string{"1k"}},
		{"library names", []string{"json (encoding/json)", "json (goccy/go-json)"}, []string{"5.501k [3.976–7.025k]"}},
		{"very long", []string{strings.Repeat("x", 80)}, []string{strings.Repeat("9", 60)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := newBarFrame(tt.labels, tt.values)
			if need := maxTextWidth(tt.labels, labelFont) + 8; fr.left < need {
				t.Errorf("left margin %.0f < %.0f needed", fr.left, need)
			}
			if need := maxTextWidth(tt.values, valueFont) + 6; fr.w-fr.right < need {
				t.Errorf("right margin %.0f < %.0f needed", fr.w-fr.right, need)
			}
			if fr.right-fr.left < minBarW {
				t.Errorf("bars get %.0f px, want >= %.0f", fr.right-fr.left, minBarW)
			}
		})
	}
}

// TestLegendWraps: keys start a new line rather than pass maxX.
func TestLegendWraps(t *testing.T) {
	six := []string{"json (encoding/json)", "json (goccy/go-json)", "cbor", "msgpack", "protobuf", "toon"}
	tests := []struct {
		name   string
		labels []string
		lines  int
	}{
		{"none", nil, 0},
		{"two", []string{"http1", "grpc"}, 1},
		{"six cells", six, 2},
		{"one too long", []string{strings.Repeat("x", 200)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pos, lines := legendLayout(70, plotW-plotRight, tt.labels)
			if lines != tt.lines {
				t.Errorf("%d lines, want %d", lines, tt.lines)
			}
			for i, p := range pos {
				end := p[0] + 16 + textWidth(tt.labels[i], legendFont)
				if end > plotW-plotRight && p[0] > 70 {
					t.Errorf("key %q ends at %.0f, past %.0f", tt.labels[i], end, plotW-plotRight)
				}
			}
		})
	}
}
