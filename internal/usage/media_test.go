package usage

import "testing"

func TestVideoPerSecond(t *testing.T) {
	for _, tc := range []struct {
		model, size string
		want        float64
		ok          bool
	}{
		{"sora-2", "", 0.10, true},
		{"sora-2-2025-12-08", "1280x720", 0.10, true},
		{"sora-2-pro", "1280x720", 0.30, true},
		{"sora-2-pro-2025-10-06", "1792x1024", 0.50, true}, // the larger size costs more
		{"veo-3.1-generate-preview", "", 0.40, true},
		{"veo-3.1-fast-generate-preview", "", 0.15, true}, // not veo-3.1-generate's price
		{"models/veo-3.0-fast-generate-001", "", 0.15, true},
		{"veo-2.0-generate-001", "", 0.35, true},
		{"sora-3", "", 0, false},
		{"sora-2x", "", 0, false}, // a prefix of the name, not a family
		{"veo-4.0-generate", "", 0, false},
	} {
		got, ok := VideoPerSecond(tc.model, tc.size)
		if got != tc.want || ok != tc.ok {
			t.Errorf("VideoPerSecond(%q, %q) = %v, %v; want %v, %v", tc.model, tc.size, got, ok, tc.want, tc.ok)
		}
	}
}
