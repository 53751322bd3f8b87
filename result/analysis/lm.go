package analysis

import "math"

// leastSquares is a small bounded non-linear least-squares problem: a few
// parameters (the law has three), each held in [lower, upper], and the
// residuals and their Jacobian at a point. A parameter whose bounds are
// equal is fixed.
//
// It is solved here rather than with gonum's optimize: the project has no
// numerical dependency, the problem is three parameters over a dozen points,
// and a Levenberg–Marquardt of sixty lines whose bounds, stopping rule and
// standard errors read in one place is easier to check against the
// published fits than a general optimiser driven through a penalty for the
// bounds (docs/model.md, "The fit").
type leastSquares struct {
	lower, upper []float64
	// residuals writes model − measurement at p into r.
	residuals func(p, r []float64)
	// jacobian writes ∂r_i/∂p_j at p into jac[i][j].
	jacobian func(p []float64, jac [][]float64)
	points   int
}

func (ls *leastSquares) sse(p, r []float64) float64 {
	ls.residuals(p, r)
	var s float64
	for _, v := range r {
		s += v * v
	}
	return s
}

func (ls *leastSquares) clamp(p []float64) {
	for j := range p {
		p[j] = min(max(p[j], ls.lower[j]), ls.upper[j])
	}
}

// solve runs Levenberg–Marquardt from p0 and returns the point with the
// least sum of squared residuals it reached, and that sum. Bounds are kept
// by projection: a step is clamped into the box, and a parameter on a bound
// whose gradient points out of the box sits out the step (an active set), so
// the others still move freely instead of the whole step shrinking to
// nothing against the wall. The damping is Marquardt's, scaled by the
// diagonal of JᵀJ, so σ (hundredths), κ (ten-thousandths) and λ (hundreds)
// need no scaling of their own.
func (ls *leastSquares) solve(p0 []float64) ([]float64, float64) {
	k := len(p0)
	p := append([]float64(nil), p0...)
	ls.clamp(p)
	r, trial := make([]float64, ls.points), make([]float64, k)
	jac := newMatrix(ls.points, k)
	cur := ls.sse(p, r)
	mu := 1e-3
	for iter := 0; iter < 500 && mu < 1e12; iter++ {
		ls.jacobian(p, jac)
		jtj, g := normalEquations(jac, r)
		free := ls.freeParameters(p, g)
		a := newMatrix(k, k)
		b := make([]float64, k)
		for i := range k {
			for j := range k {
				if free[i] && free[j] {
					a[i][j] = jtj[i][j]
				}
			}
			a[i][i] += mu * max(jtj[i][i], 1e-300)
			if free[i] {
				b[i] = -g[i]
			}
		}
		step, ok := solveLinear(a, b)
		if !ok {
			mu *= 10
			continue
		}
		for j := range k {
			trial[j] = p[j] + step[j]
		}
		ls.clamp(trial)
		next := ls.sse(trial, r)
		if !(next < cur) {
			mu *= 10
			ls.residuals(p, r)
			continue
		}
		small := cur-next <= 1e-14*cur
		copy(p, trial)
		cur = next
		mu = max(mu/10, 1e-12)
		if small {
			break
		}
	}
	return p, cur
}

// freeParameters says which parameters may move in this step: not a fixed
// one, and not one on a bound whose descent direction (−g) leaves the box.
func (ls *leastSquares) freeParameters(p, g []float64) []bool {
	free := make([]bool, len(p))
	for j := range p {
		switch {
		case ls.lower[j] == ls.upper[j]:
		case p[j] <= ls.lower[j] && g[j] > 0:
		case p[j] >= ls.upper[j] && g[j] < 0:
		default:
			free[j] = true
		}
	}
	return free
}

// covariance is s²(JᵀJ)⁻¹ at p over the parameters that are not fixed, with
// s² = SSE / (points − parameters): the asymptotic covariance of the
// estimates, from which their standard errors are the square roots of the
// diagonal (NaN for a fixed parameter). ok is false when JᵀJ is singular:
// the points do not tell the parameters apart.
func (ls *leastSquares) covariance(p []float64, sse float64) (stderr []float64, ok bool) {
	var idx []int
	for j := range p {
		if ls.lower[j] != ls.upper[j] {
			idx = append(idx, j)
		}
	}
	dof := ls.points - len(idx)
	if dof <= 0 {
		return nil, false
	}
	full := newMatrix(ls.points, len(p))
	ls.jacobian(p, full)
	jac := newMatrix(ls.points, len(idx))
	for i := range full {
		for c, j := range idx {
			jac[i][c] = full[i][j]
		}
	}
	jtj, _ := normalEquations(jac, make([]float64, ls.points))
	inv, ok := invert(jtj)
	if !ok {
		return nil, false
	}
	s2 := sse / float64(dof)
	stderr = make([]float64, len(p))
	for j := range stderr {
		stderr[j] = math.NaN()
	}
	for c, j := range idx {
		stderr[j] = math.Sqrt(s2 * inv[c][c])
		if math.IsNaN(stderr[j]) || math.IsInf(stderr[j], 0) {
			return nil, false
		}
	}
	return stderr, true
}

func newMatrix(rows, cols int) [][]float64 {
	m := make([][]float64, rows)
	for i := range m {
		m[i] = make([]float64, cols)
	}
	return m
}

// normalEquations returns JᵀJ and Jᵀr.
func normalEquations(jac [][]float64, r []float64) ([][]float64, []float64) {
	k := len(jac[0])
	jtj, g := newMatrix(k, k), make([]float64, k)
	for i, row := range jac {
		for a := range k {
			g[a] += row[a] * r[i]
			for b := range k {
				jtj[a][b] += row[a] * row[b]
			}
		}
	}
	return jtj, g
}

// solveLinear solves a·x = b by Gaussian elimination with partial pivoting;
// a and b are overwritten. ok is false when a is singular.
func solveLinear(a [][]float64, b []float64) ([]float64, bool) {
	n := len(b)
	for c := range n {
		piv := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		if a[piv][c] == 0 || math.IsNaN(a[piv][c]) {
			return nil, false
		}
		a[c], a[piv] = a[piv], a[c]
		b[c], b[piv] = b[piv], b[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for j := c; j < n; j++ {
				a[r][j] -= f * a[c][j]
			}
			b[r] -= f * b[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for j := r + 1; j < n; j++ {
			s -= a[r][j] * x[j]
		}
		x[r] = s / a[r][r]
	}
	return x, true
}

// invert returns m⁻¹ for a symmetric positive definite m (JᵀJ). It inverts
// m scaled to a unit diagonal, so parameters of very different sizes do not
// read as singular; a scaled inverse whose diagonal (each parameter's
// variance inflation) exceeds 1e10 counts as singular: the points cannot
// tell that parameter from a combination of the others.
func invert(m [][]float64) ([][]float64, bool) {
	n := len(m)
	d := make([]float64, n)
	for i := range n {
		if !(m[i][i] > 0) {
			return nil, false
		}
		d[i] = math.Sqrt(m[i][i])
	}
	inv := newMatrix(n, n)
	for c := range n {
		a := newMatrix(n, n)
		for i := range n {
			for j := range n {
				a[i][j] = m[i][j] / (d[i] * d[j])
			}
		}
		e := make([]float64, n)
		e[c] = 1
		x, ok := solveLinear(a, e)
		if !ok || !(x[c] > 0) || x[c] > 1e10 {
			return nil, false
		}
		for i := range n {
			inv[i][c] = x[i] / (d[i] * d[c])
		}
	}
	return inv, true
}
