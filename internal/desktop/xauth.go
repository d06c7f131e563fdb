package desktop

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
)

// The display's X authorization: Xvfb starts with -auth on a file holding a random
// MIT-MAGIC-COOKIE-1, and every X client massgen starts gets XAUTHORITY pointing at it. Without
// it any program on the machine could connect to the agent's display, read its screen and type
// into it. The file lives in a private folder of the desktop's (0700, the file 0600) and is
// removed with it.

// familyWild is the Xauthority entry family that matches any host address.
const familyWild = 0xffff

// cookieName is the authorization protocol the entries are for.
const cookieName = "MIT-MAGIC-COOKIE-1"

// newCookie returns 16 random bytes, the size MIT-MAGIC-COOKIE-1 takes.
func newCookie() ([]byte, error) {
	c := make([]byte, 16)
	if _, err := rand.Read(c); err != nil {
		return nil, fmt.Errorf("the display's cookie: %w", err)
	}
	return c, nil
}

// xauthEntry encodes one Xauthority entry: family, address, display number, protocol name and
// cookie, each field but the first a big-endian 16-bit length and its bytes. number "" matches
// every display (the server reads only the name and cookie; clients match on the number).
func xauthEntry(number string, cookie []byte) []byte {
	var b bytes.Buffer
	field := func(p []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint16(len(p)))
		b.Write(p)
	}
	_ = binary.Write(&b, binary.BigEndian, uint16(familyWild))
	field(nil) // address: any, with familyWild
	field([]byte(number))
	field([]byte(cookieName))
	field(cookie)
	return b.Bytes()
}

// writeXauth writes the authority file path for display number (without its colon; "" for
// any) and cookie, replacing it whole: Xvfb may read it again at any reset.
func writeXauth(path, number string, cookie []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".xauth-*")
	if err != nil {
		return fmt.Errorf("the display's authority file: %w", err)
	}
	_, werr := tmp.Write(xauthEntry(number, cookie))
	if err := tmp.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o600)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("the display's authority file: %w", werr)
	}
	return nil
}
