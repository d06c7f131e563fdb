package paraphrase

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"massgen/internal/private"
)

// Cache keeps checked variants on disk, one private file per key, so the same question with
// the same settings and model costs no call the next time. Only outcomes where every slot
// passed are kept: a failure is tried again. The zero Cache (no Dir) keeps nothing.
type Cache struct {
	Dir string
}

// maxCacheFile bounds a cache file read back: MaxVariants variants and their JSON.
const maxCacheFile = MaxReplyBytes

// Key names the outcome of question under s written by model (the backend type, model and
// endpoint, so another model's variants are never reused).
func Key(s Settings, question, model string) string {
	b, _ := json.Marshal(struct {
		Q, Model, Strategy string
		N                  int
		Threshold          float64
		Validate, CoT      bool
		Temp               []float64
	}{strings.TrimSpace(question), model, s.strategy(), s.Variants, s.Threshold, s.Validate, s.ChainOfThought, s.TemperatureRange})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

type cached struct {
	Key   string `json:"key"`
	Slots []Slot `json:"slots"`
}

// Get returns the outcome kept under key; ok is false when there is none or it cannot be
// read (a damaged file is a miss, never an error: the call is simply made again).
func (c Cache) Get(key string) (Outcome, bool) {
	if c.Dir == "" {
		return Outcome{}, false
	}
	f, err := os.Open(c.path(key))
	if err != nil {
		return Outcome{}, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCacheFile+1))
	if err != nil || len(data) > maxCacheFile {
		return Outcome{}, false
	}
	var v cached
	if json.Unmarshal(data, &v) != nil || v.Key != key || len(v.Slots) == 0 || len(v.Slots) > MaxVariants {
		return Outcome{}, false
	}
	for _, s := range v.Slots {
		if !s.OK() {
			return Outcome{}, false
		}
	}
	return Outcome{Slots: v.Slots}, true
}

// Put keeps o under key when every slot passed; it reports a folder or file that could not
// be written.
func (c Cache) Put(key string, o Outcome) error {
	if c.Dir == "" || len(o.Slots) == 0 || o.Passed() != len(o.Slots) {
		return nil
	}
	data, err := json.Marshal(cached{Key: key, Slots: o.Slots})
	if err != nil {
		return err
	}
	if err := private.MkdirAll(c.Dir); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("paraphrase cache: %w", err)
	}
	if err := private.WriteFileAtomic(c.path(key), data); err != nil {
		return fmt.Errorf("paraphrase cache: %w", err)
	}
	return nil
}

func (c Cache) path(key string) string { return filepath.Join(c.Dir, key+".json") }
