package workspace

import "testing"

func TestSecretPattern(t *testing.T) {
	for p, want := range map[string]string{
		"/p/.env": ".env", "/p/.ENV": ".env", "/p/.env.local": ".env.*", "/p/.env.production": ".env.*",
		"/p/.env.example": "", "/p/.env.sample": "", "/p/.env.template": "", "/p/env.py": "",
		"/p/.git/config": ".git/config", "/p/.GIT/CONFIG": ".git/config", "/p/config": "", "/p/.git/HEAD": "",
		"/p/.git-credentials": ".git-credentials", "/p/.netrc": ".netrc", "/p/_netrc": "_netrc",
		"/p/.npmrc": ".npmrc", "/p/.pypirc": ".pypirc", "/p/.pgpass": ".pgpass",
		"/p/id_rsa": "id_rsa", "/p/id_ed25519": "id_ed25519", "/p/id_ecdsa": "id_ecdsa", "/p/id_dsa": "id_dsa",
		"/p/id_rsa.pub": "", "/p/id_ed25519.pub": "",
		"/p/tls.pem": "*.pem", "/p/tls.KEY": "*.key", "/p/c.p12": "*.p12", "/p/c.pfx": "*.pfx", "/p/.pem": "",
		"/p/keys.py": "", "/p/key.go": "", "/p/monkey": "",
		"/p/.aws/credentials": ".aws/credentials", "/p/credentials": "", "/p/grpc/credentials": "",
		"/p/credentials.json": "credentials.json", "/p/.claude/.credentials.json": ".credentials.json",
		"/p/.docker/config.json": ".docker/config.json", "/p/config.json": "",
		"/p/secrets.yaml": "secrets.yaml", "/p/secrets.yml": "secrets.yml", "/p/secrets.json": "secrets.json",
		"/p/secrets.toml": "secrets.toml", "/p/secrets.go": "", "/p/secrets.py": "", "/p/secrets": "",
	} {
		if got := SecretPattern(p); got != want {
			t.Errorf("SecretPattern(%q) = %q, want %q", p, got, want)
		}
	}
}
