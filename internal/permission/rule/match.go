package rule

// Match is Python's fnmatch.fnmatchcase, which MassGen's rules use: * matches any run of
// characters, / included (so ** is the same as *), ? one character, [abc] and [a-z] one of a
// set, [!abc] one outside it. An unclosed [ is a literal. Matching is case-sensitive and in
// time linear in len(pattern)*len(name), whatever the pattern: a rule cannot stall a call.
func Match(pattern, name string) bool {
	p, s := []rune(pattern), []rune(name)
	pi, si := 0, 0
	star, mark := -1, 0 // the last * seen and the name position it is retried from
	for si < len(s) {
		if pi < len(p) {
			switch c := p[pi]; c {
			case '*':
				star, mark = pi, si
				pi++
				continue
			case '?':
				pi++
				si++
				continue
			case '[':
				if end := classEndRunes(p, pi); end >= 0 {
					if classMatch(p[pi+1:end], s[si]) {
						pi = end + 1
						si++
						continue
					}
				} else if s[si] == '[' {
					pi++
					si++
					continue
				}
			default:
				if c == s[si] {
					pi++
					si++
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		mark++
		pi, si = star+1, mark
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// classEndRunes is the index of the ] closing the bracket expression that starts at p[i], or
// -1. A ] right after [ or [! belongs to the set, as in fnmatch.
func classEndRunes(p []rune, i int) int {
	j := i + 1
	if j < len(p) && p[j] == '!' {
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++
	}
	for ; j < len(p); j++ {
		if p[j] == ']' {
			return j
		}
	}
	return -1
}

// classMatch reports whether c is in the set body (what is between [ and ]).
func classMatch(body []rune, c rune) bool {
	negate := len(body) > 0 && body[0] == '!'
	if negate {
		body = body[1:]
	}
	in := false
	for k := 0; k < len(body); k++ {
		if k+2 < len(body) && body[k+1] == '-' {
			if body[k] <= c && c <= body[k+2] {
				in = true
			}
			k += 2
			continue
		}
		if body[k] == c {
			in = true
		}
	}
	return in != negate
}
