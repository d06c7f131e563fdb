package eval

import (
	"massgen/internal/lazy"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Where an answer states its result, most explicit first. A model's final answer is prose
// with working in it; the result is the number it marks, else the last number it writes.
var (
	boxedRe  = lazy.Regexp(`\\boxed\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}`)
	hashesRe = lazy.Regexp(`####\s*([^\n]*)`)
	// "answer is 42", "Answer: 42", "final answer = 42": the first number after the last such
	// phrase on its line. A bare "answer" ("to answer this, 5 + 6 = 11") is not one.
	answerNumRe = lazy.Regexp(`(?i)\banswer\s*(?:is\s*:?|:|=)([^\n]*)`)
)

// ExtractNumber reads the number an answer gives: the last number inside the last
// \boxed{...}; else the number after the last "####" (GSM8K's mark); else the first number
// after the last "answer is" / "answer:" on its line; else the last number of the text.
// Numbers may have thousands commas (1,234,567), a decimal part, a sign, a currency sign
// before or a percent sign after (50% reads as 50: the sign is ignored) and may be fractions (3/4 reads as 0.75).
// Digits glued to a letter (agent1, H2O, x2) are not numbers.
func ExtractNumber(s string) (float64, bool) {
	if m := boxedRe().FindAllStringSubmatch(s, -1); len(m) > 0 {
		if nums := numbers(m[len(m)-1][1]); len(nums) > 0 {
			return nums[len(nums)-1], true
		}
	}
	if m := hashesRe().FindAllStringSubmatch(s, -1); len(m) > 0 {
		if nums := numbers(m[len(m)-1][1]); len(nums) > 0 {
			return nums[0], true
		}
	}
	if m := answerNumRe().FindAllStringSubmatch(s, -1); len(m) > 0 {
		if nums := numbers(m[len(m)-1][1]); len(nums) > 0 {
			return nums[0], true
		}
	}
	if nums := numbers(s); len(nums) > 0 {
		return nums[len(nums)-1], true
	}
	return 0, false
}

// numbers lists the numbers of s in order.
func numbers(s string) []float64 {
	var out []float64
	prev := ' ' // the rune before i
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if start(s, i, prev) {
			if v, n, ok := number(s[i:]); ok {
				out = append(out, v)
				i += n
				prev, _ = utf8.DecodeLastRuneInString(s[:i])
				continue
			}
		}
		prev = r
		i += size
	}
	return out
}

// start reports whether a number may begin at s[i]: a digit, a sign or a point before a
// digit, not glued to a letter, digit or point before it.
func start(s string, i int, prev rune) bool {
	if unicode.IsLetter(prev) || unicode.IsDigit(prev) || prev == '.' || prev == '_' {
		return false
	}
	rest := s[i:]
	switch {
	case rest[0] >= '0' && rest[0] <= '9':
		return true
	case rest[0] == '-' || rest[0] == '+' || rest[0] == '.':
		return len(rest) > 1 && (isDigit(rest[1]) || rest[0] != '.' && rest[1] == '.' && len(rest) > 2 && isDigit(rest[2]))
	case strings.HasPrefix(rest, "−"): // U+2212, the minus sign typeset answers use
		return len(rest) > len("−") && isDigit(rest[len("−")])
	}
	return false
}

// number parses the number at the start of s and returns its value and length in bytes.
func number(s string) (float64, int, bool) {
	i := 0
	neg := false
	switch {
	case strings.HasPrefix(s, "−"):
		neg, i = true, len("−")
	case s[0] == '-':
		neg, i = true, 1
	case s[0] == '+':
		i = 1
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	digits := s[intStart:i]
	// Thousands groups: "1,234,567", never "1,23" or "12345,678".
	if i-intStart >= 1 && i-intStart <= 3 {
		j := i
		grouped := digits
		for j+4 <= len(s) && s[j] == ',' && isDigit(s[j+1]) && isDigit(s[j+2]) && isDigit(s[j+3]) && (j+4 == len(s) || !isDigit(s[j+4])) {
			grouped += s[j+1 : j+4]
			j += 4
		}
		digits, i = grouped, j
	}
	if i < len(s) && s[i] == '.' && i+1 < len(s) && isDigit(s[i+1]) {
		k := i + 1
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		digits += s[i:k]
		i = k
	}
	if digits == "" || digits == "." {
		return 0, 0, false
	}
	v, err := strconv.ParseFloat(digits, 64)
	if err != nil {
		return 0, 0, false
	}
	// A fraction: "3/4" (no spaces: "1 / 2" in working is two numbers).
	if i+1 < len(s) && s[i] == '/' && isDigit(s[i+1]) && !strings.Contains(digits, ".") {
		k := i + 1
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if d, err := strconv.ParseFloat(s[i+1:k], 64); err == nil && d != 0 {
			v /= d
			i = k
		}
	}
	if neg {
		v = -v
	}
	return v, i, true
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }
