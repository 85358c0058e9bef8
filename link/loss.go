package link

import "math/rand/v2"

// lossState is a Loss model's state in one direction: which state of the
// Gilbert-Elliott chain it is in.
type lossState struct {
	m   Loss
	bad bool
}

// lose draws the next packet's fate: the chain moves first, then the
// packet is lost with its state's loss (netem's order).
func (s *lossState) lose(rng *rand.Rand) bool {
	if s.m.P > 0 {
		if s.bad {
			if rng.Float64() < s.m.R {
				s.bad = false
			}
		} else if rng.Float64() < s.m.P {
			s.bad = true
		}
	}
	x := s.m.GoodLoss
	if s.bad {
		x = s.m.BadLoss
	}
	return x > 0 && rng.Float64() < x
}
