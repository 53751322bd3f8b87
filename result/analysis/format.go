package analysis

import (
	"math"
	"strconv"
	"strings"
)

// fmtNum formats v with about three significant digits: 398, 41, 10.2, 3.85.
func fmtNum(v float64) string {
	a := math.Abs(v)
	prec := 0
	switch {
	case a >= 100 || a == 0:
	case a >= 10:
		prec = 1
	case a >= 1:
		prec = 2
	default:
		prec = min(2-int(math.Floor(math.Log10(a))), 9)
	}
	return trimZeros(strconv.FormatFloat(v, 'f', prec, 64))
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// fmtSeconds formats a duration in seconds in the unit that suits it: 41ms.
func fmtSeconds(s float64) string {
	switch a := math.Abs(s); {
	case a == 0:
		return "0s"
	case a >= 1:
		return fmtNum(s) + "s"
	case a >= 1e-3:
		return fmtNum(s*1e3) + "ms"
	case a >= 1e-6:
		return fmtNum(s*1e6) + "µs"
	}
	return fmtNum(s*1e9) + "ns"
}

// fmtPct formats a ratio as a percentage: 37%, 3.2%, 0.41%. A share below
// all does not round up to 100%.
func fmtPct(r float64) string {
	p := r * 100
	switch {
	case p >= 10:
		s := strconv.FormatFloat(p, 'f', 0, 64)
		if s == "100" && p < 100 {
			s = trimZeros(strconv.FormatFloat(math.Floor(p*10)/10, 'f', 1, 64))
		}
		return s + "%"
	case p >= 1:
		return trimZeros(strconv.FormatFloat(p, 'f', 1, 64)) + "%"
	case p > 0:
		return trimZeros(strconv.FormatFloat(p, 'f', min(1-int(math.Floor(math.Log10(p))), 9), 64)) + "%"
	}
	return "0%"
}
