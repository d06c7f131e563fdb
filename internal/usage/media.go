package usage

import "strings"

// videoPrices are list prices in USD per second of generated video (late 2025): OpenAI's Sora
// and Gemini API's Veo (with sound). Keys are model names or prefixes, found as Lookup finds
// token prices, so that dated snapshots ("sora-2-pro-2025-10-06") find their family.
var videoPrices = map[string]float64{
	"sora-2":                0.10,
	"sora-2-pro":            0.30, // 720p; the larger sizes cost more (videoPriceBySize)
	"veo-3.1-generate":      0.40,
	"veo-3.1-fast-generate": 0.15,
	"veo-3.0-generate":      0.40,
	"veo-3.0-fast-generate": 0.15,
	"veo-2.0-generate":      0.35,
}

// videoPriceBySize are the prices that depend on the video's size.
var videoPriceBySize = map[string]map[string]float64{
	"sora-2-pro": {"1024x1792": 0.50, "1792x1024": 0.50},
}

// VideoPerSecond returns the list price in USD of one second of video from model at size
// ("" when the provider chose it), and whether the table knows the model. An unknown model
// is not free: its cost is unknown.
func VideoPerSecond(model, size string) (float64, bool) {
	m := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(model)), "models/")
	best := ""
	for k := range videoPrices {
		if (m == k || strings.HasPrefix(m, k+"-")) && len(k) > len(best) {
			best = k
		}
	}
	if best == "" {
		return 0, false
	}
	if p, ok := videoPriceBySize[best][size]; ok {
		return p, true
	}
	return videoPrices[best], true
}

// CodeInterpreterFee is OpenAI's list price in USD of one code interpreter container (a
// session of its hosted Python, up to an hour), billed on top of the tokens.
const CodeInterpreterFee = 0.03
