package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"massgen/internal/lazy"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"massgen/internal/private"
)

// An eval run is a folder: the results file, the reports and the items' logs side by side.
const (
	ResultsFile = "results.jsonl"
	SummaryFile = "summary.json"
	ReportFile  = "report.md"
	ChartFile   = "chart.svg"
	WeightsFile = "weights.json"
	LogsDir     = "logs"
)

// runStamp is the timestamp a run folder's name ends with.
const runStamp = "20060102_150405"

var (
	stampRe  = lazy.Regexp(`^\d{8}_\d{6}(_\d+)?$`)
	unsafeRe = lazy.Regexp(`[^A-Za-z0-9._-]+`)
)

// DatasetName is the dataset's file name without its extension, made safe for a folder name.
func DatasetName(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	name = unsafeRe().ReplaceAllString(name, "_")
	if name == "" || name == "." || name == ".." {
		return "dataset"
	}
	return name
}

// NewRunDir names a new run folder under root: <dataset>_<timestamp>, with a counter when a
// run of the same second exists. It does not create it.
func NewRunDir(root, dataset string, now time.Time) string {
	base := filepath.Join(root, DatasetName(dataset)+"_"+now.Format(runStamp))
	dir := base
	for n := 2; ; n++ {
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			return dir
		}
		dir = fmt.Sprintf("%s_%d", base, n)
	}
}

// LatestRunDir is the newest run folder of dataset under root that holds a results file, ""
// when there is none.
func LatestRunDir(root, dataset string) (string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", root, err)
	}
	prefix := DatasetName(dataset) + "_"
	best, bestKey := "", ""
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() || !stampRe().MatchString(stamp) {
			continue
		}
		if st, err := os.Stat(filepath.Join(root, e.Name(), ResultsFile)); err != nil || !st.Mode().IsRegular() {
			continue
		}
		if k := runKey(stamp); k > bestKey {
			best, bestKey = e.Name(), k
		}
	}
	if best == "" {
		return "", nil
	}
	return filepath.Join(root, best), nil
}

// runKey orders run stamps: "20260101_120000" before "20260101_120000_2", "_9" before
// "_10".
func runKey(stamp string) string {
	base, counter, _ := strings.Cut(stamp[len("20060102_"):], "_")
	n, _ := strconv.Atoi(counter)
	return fmt.Sprintf("%s_%s_%06d", stamp[:len("20060102")], base, n)
}

// WriteReports writes summary.json, report.md, chart.svg and weights.json next to the results
// file.
func WriteReports(s Summary) error {
	dir := filepath.Dir(s.Results)
	var js, md, svg bytes.Buffer
	if err := WriteJSON(&js, s); err != nil {
		return err
	}
	if err := WriteMarkdown(&md, s, ChartFile); err != nil {
		return err
	}
	if err := WriteChart(&svg, s); err != nil {
		return err
	}
	w, err := json.MarshalIndent(Weights(s), "", "  ")
	if err != nil {
		return fmt.Errorf("write the weights: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{SummaryFile, js.Bytes()}, {ReportFile, md.Bytes()}, {ChartFile, svg.Bytes()}, {WeightsFile, append(w, '\n')}} {
		if err := private.WriteFile(filepath.Join(dir, f.name), f.data); err != nil {
			return fmt.Errorf("write the report: %w", err)
		}
	}
	return nil
}
