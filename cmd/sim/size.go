package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/fleet/scenario"
)

// byteSize is a flag's size in bytes, written as a whole number with an
// optional unit: 1048576, 512KiB, 4MiB (KB, MB and GB are read as the
// same powers of 1024). It is at least 1 byte and at most maxByteSize.
type byteSize int64

// maxByteSize is the largest scenario file one load may read: what its
// parse costs keeps it within its memory budget (scenario.MaxFileSize).
const maxByteSize = scenario.MaxFileSize

var sizeUnits = []struct {
	names []string
	n     int64
}{
	{[]string{"GiB", "GB", "G"}, 1 << 30},
	{[]string{"MiB", "MB", "M"}, 1 << 20},
	{[]string{"KiB", "KB", "K"}, 1 << 10},
	{[]string{"B", ""}, 1},
}

func (b byteSize) String() string {
	for _, u := range sizeUnits {
		if int64(b)%u.n == 0 {
			return strconv.FormatInt(int64(b)/u.n, 10) + u.names[0]
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

func (b *byteSize) Type() string { return "size" }

func (b *byteSize) Set(s string) error {
	t := strings.TrimSpace(s)
	for _, u := range sizeUnits {
		for _, name := range u.names {
			num, ok := strings.CutSuffix(t, name)
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil {
				continue // "MiB" ends in "B" too
			}
			if n < 1 || n > maxByteSize/u.n {
				return fmt.Errorf("want 1 byte to %s", byteSize(maxByteSize).String())
			}
			*b = byteSize(n * u.n)
			return nil
		}
	}
	return fmt.Errorf("want a size in bytes, or with a unit: 512KiB, 2MiB")
}
