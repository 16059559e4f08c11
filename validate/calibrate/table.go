package calibrate

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Summary is the held-out error and the ranking check of a report.
type Summary struct {
	HeldOut      int
	MedianAbsErr float64 // percent
	WorstAbsErr  float64 // percent
	Worst        string
	// FitMedianAbsErr is the median |error| on the fitted targets.
	FitMedianAbsErr float64
	// Spearman is the rank correlation of simulated (after) and measured
	// rx_pps over the configurations; SameOrder says whether the two orders agree
	// exactly; Concordant counts agreeing pairs of Pairs.
	Spearman, SpearmanBefore float64
	// InRange counts held-out targets simulated within the measured range
	// of repetition medians; HeldSpread is their median relative range.
	InRange    int
	HeldSpread float64
	// RxHeldOut, RxMedian, RxWorst: the same for the rx_pps targets only.
	RxHeldOut         int
	RxMedian, RxWorst float64
	SameOrder         bool
	Concordant, Pairs int
}

// Summarize computes the held-out statistics and the ranking check.
func Summarize(rows []Row) Summary {
	var s Summary
	var held, fitted, spread, rx []float64
	for _, r := range rows {
		e := math.Abs(r.ErrPct())
		if r.InFit {
			fitted = append(fitted, e)
			continue
		}
		held = append(held, e)
		spread = append(spread, r.Spread*100)
		if r.InRange() {
			s.InRange++
		}
		if !strings.Contains(r.Name, ":") {
			rx = append(rx, e)
			s.RxWorst = max(s.RxWorst, e)
		}
		if e > s.WorstAbsErr || s.Worst == "" {
			s.WorstAbsErr, s.Worst = e, r.Name
		}
	}
	s.HeldOut = len(held)
	s.MedianAbsErr = median(held)
	s.FitMedianAbsErr = median(fitted)
	s.HeldSpread = median(spread)
	s.RxHeldOut = len(rx)
	s.RxMedian = median(rx)
	// The ranking is over the configurations' rx_pps (all rows if none).
	var meas, after, before []float64
	for _, r := range rows {
		if !strings.Contains(r.Name, ":") {
			meas, after, before = append(meas, r.Measured), append(after, r.After), append(before, r.Before)
		}
	}
	if len(meas) == 0 {
		for _, r := range rows {
			meas, after, before = append(meas, r.Measured), append(after, r.After), append(before, r.Before)
		}
	}
	s.Spearman = spearman(meas, after)
	s.SpearmanBefore = spearman(meas, before)
	for i := range meas {
		for j := i + 1; j < len(meas); j++ {
			s.Pairs++
			if (meas[i]-meas[j])*(after[i]-after[j]) > 0 {
				s.Concordant++
			}
		}
	}
	s.SameOrder = s.Concordant == s.Pairs
	return s
}

// ranks returns average ranks (1-based; ties share their mean rank).
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

// spearman is Pearson's correlation of the ranks (NaN for fewer than 2).
func spearman(a, b []float64) float64 {
	if len(a) < 2 {
		return math.NaN()
	}
	ra, rb := ranks(a), ranks(b)
	n := float64(len(a))
	var ma, mb float64
	for i := range ra {
		ma += ra[i]
		mb += rb[i]
	}
	ma /= n
	mb /= n
	var sab, saa, sbb float64
	for i := range ra {
		da, db := ra[i]-ma, rb[i]-mb
		sab += da * db
		saa += da * da
		sbb += db * db
	}
	if saa == 0 || sbb == 0 {
		return math.NaN()
	}
	return sab / math.Sqrt(saa*sbb)
}

func thousands(v float64) string {
	n := int64(math.Round(v))
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// WriteTable prints the calibration table, the fitted stages and the
// held-out summary.
func WriteTable(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "%-44s %12s %7s %12s %12s %8s %8s  %s\n", "configuration", "measured", "spread", "sim before", "sim after", "err bef", "error", "fit")
	for _, r := range rep.Rows {
		in := "in"
		if !r.InFit {
			in = "held out"
		}
		if r.InRange() {
			in += " (in range)"
		}
		fmt.Fprintf(w, "%-44s %12s %6.0f%% %12s %12s %+7.1f%% %+7.1f%%  %s\n", r.Name, thousands(r.Measured), r.Spread*100,
			thousands(r.Before), thousands(r.After), r.ErrBeforePct(), r.ErrPct(), in)
	}
	if len(rep.Fitted) > 0 {
		fmt.Fprintln(w, "fitted stages (scale of the prior costs):")
		for _, f := range rep.Fitted {
			fmt.Fprintf(w, "  %-16s x%.3f  %s\n", f.Stage.Name, f.Scale, strings.Join(f.Stage.Costs, ", "))
		}
	}
	if len(rep.Fixed) > 0 {
		fmt.Fprintf(w, "not identified by the fitted targets (kept): %s\n", strings.Join(rep.Fixed, ", "))
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "skipped: %s\n", s)
	}
	for _, s := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	s := Summarize(rep.Rows)
	fmt.Fprintf(w, "fit: %d evaluations (%s); median |error| on fitted targets %.1f%%\n", rep.Evals, rep.Status, s.FitMedianAbsErr)
	if s.HeldOut > 0 {
		fmt.Fprintf(w, "held out: %d targets, median |error| %.1f%%, worst %.1f%% (%s)\n", s.HeldOut, s.MedianAbsErr, s.WorstAbsErr, s.Worst)
		fmt.Fprintf(w, "held out rx_pps: %d configurations, median |error| %.1f%%, worst %.1f%%\n", s.RxHeldOut, s.RxMedian, s.RxWorst)
		fmt.Fprintf(w, "held out within the measured range of repetition medians: %d of %d (median spread %.0f%%)\n", s.InRange, s.HeldOut, s.HeldSpread)
	} else {
		fmt.Fprintln(w, "held out: none")
	}
	same := "no"
	if s.SameOrder {
		same = "yes"
	}
	fmt.Fprintf(w, "ranking of the configurations by rx_pps: Spearman %.3f (before %.3f); same order as measured: %s (%d of %d pairs agree)\n",
		s.Spearman, s.SpearmanBefore, same, s.Concordant, s.Pairs)
}
