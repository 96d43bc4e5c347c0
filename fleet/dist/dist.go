// Package dist samples durations from the distributions a scenario can give
// for service times and schedules: constant, uniform, exponential and
// log-normal. Sampling takes a seeded *rand.Rand, so a run repeats.
//
//	d, _ := dist.Parse("lognormal(5ms, 0.5)")
//	r := rand.New(rand.NewPCG(seed, uint64(workerIndex)))
//	service := d.Sample(r)
package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Kind names a distribution.
type Kind int

const (
	Constant    Kind = iota // always Mean
	Uniform                 // evenly in [Min, Max]
	Exponential             // mean Mean (memoryless: a Poisson process's gaps)
	LogNormal               // median Mean, shape Sigma (a heavy right tail)
)

// Dist is a distribution of durations. The zero value is Constant 0.
type Dist struct {
	Kind     Kind
	Mean     time.Duration // Constant value, Exponential mean, LogNormal median
	Min, Max time.Duration // Uniform bounds
	Sigma    float64       // LogNormal shape (the log's standard deviation)
}

// Const returns the constant distribution d.
func Const(d time.Duration) Dist { return Dist{Kind: Constant, Mean: d} }

// Sample draws one duration (never negative).
func (d Dist) Sample(r *rand.Rand) time.Duration {
	switch d.Kind {
	case Uniform:
		if d.Max <= d.Min {
			return d.Min
		}
		return d.Min + time.Duration(r.Int64N(int64(d.Max-d.Min)+1))
	case Exponential:
		return time.Duration(r.ExpFloat64() * float64(d.Mean))
	case LogNormal:
		return time.Duration(float64(d.Mean) * math.Exp(d.Sigma*r.NormFloat64()))
	default:
		return d.Mean
	}
}

// Average returns the distribution's mean.
func (d Dist) Average() time.Duration {
	switch d.Kind {
	case Uniform:
		return (d.Min + d.Max) / 2
	case LogNormal:
		return time.Duration(float64(d.Mean) * math.Exp(d.Sigma*d.Sigma/2))
	default:
		return d.Mean
	}
}

func (d Dist) String() string {
	switch d.Kind {
	case Uniform:
		return fmt.Sprintf("uniform(%v, %v)", d.Min, d.Max)
	case Exponential:
		return fmt.Sprintf("exponential(%v)", d.Mean)
	case LogNormal:
		return fmt.Sprintf("lognormal(%v, %g)", d.Mean, d.Sigma)
	default:
		return d.Mean.String()
	}
}

// Syntax is the accepted notation, for error messages and docs.
const Syntax = `a duration ("5ms", constant), "uniform(1ms, 9ms)", "exponential(5ms)" or "lognormal(5ms, 0.5)" (median, sigma)`

// Parse reads the notation of Syntax.
func Parse(s string) (Dist, error) {
	s = strings.TrimSpace(s)
	name, args, ok := strings.Cut(s, "(")
	if !ok {
		d, err := parseDur(s)
		return Const(d), err
	}
	if !strings.HasSuffix(args, ")") {
		return Dist{}, fmt.Errorf("distribution %q: missing \")\"; want %s", s, Syntax)
	}
	parts := strings.Split(strings.TrimSuffix(args, ")"), ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	want := func(n int) error {
		if len(parts) != n {
			return fmt.Errorf("distribution %q: %s takes %d argument(s); want %s", s, name, n, Syntax)
		}
		return nil
	}
	switch strings.TrimSpace(name) {
	case "constant":
		if err := want(1); err != nil {
			return Dist{}, err
		}
		d, err := parseDur(parts[0])
		return Const(d), err
	case "uniform":
		if err := want(2); err != nil {
			return Dist{}, err
		}
		lo, err := parseDur(parts[0])
		if err != nil {
			return Dist{}, err
		}
		hi, err := parseDur(parts[1])
		if err != nil {
			return Dist{}, err
		}
		if hi < lo {
			return Dist{}, fmt.Errorf("distribution %q: max %v below min %v", s, hi, lo)
		}
		return Dist{Kind: Uniform, Min: lo, Max: hi}, nil
	case "exponential":
		if err := want(1); err != nil {
			return Dist{}, err
		}
		m, err := parseDur(parts[0])
		return Dist{Kind: Exponential, Mean: m}, err
	case "lognormal":
		if err := want(2); err != nil {
			return Dist{}, err
		}
		m, err := parseDur(parts[0])
		if err != nil {
			return Dist{}, err
		}
		sigma, err := strconv.ParseFloat(parts[1], 64)
		if err != nil || sigma < 0 || sigma > 5 {
			return Dist{}, fmt.Errorf("distribution %q: sigma %q must be a number from 0 to 5", s, parts[1])
		}
		return Dist{Kind: LogNormal, Mean: m, Sigma: sigma}, nil
	}
	return Dist{}, fmt.Errorf("distribution %q: unknown %q; want %s", s, name, Syntax)
}

func parseDur(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: want a Go duration such as 5ms, 1.5s or 2m", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q: must not be negative", s)
	}
	return d, nil
}

// MarshalText writes the notation Parse reads.
func (d Dist) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses the notation of Syntax.
func (d *Dist) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}
