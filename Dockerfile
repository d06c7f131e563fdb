# massgen in a container: static binaries built in a Go stage (massgen, and massgen-temporal
# for --temporal and massgen worker), run as a non-root user.
#
#   docker build -t massgen .                                   # the binaries alone
#   docker build -t massgen --build-arg WITH_PYTHON=1 .         # + python3, for custom_tools
#   docker build -t massgen --build-arg WITH_NODE=1 .           # + Node.js and npm, for npm CLIs
#   docker run --rm -e OPENAI_API_KEY -v "$PWD:/work" massgen --config /work/team.yaml "question"
#
# The image needs no network at run time beyond the model APIs. Logs go to /work/.massgen (the
# working directory) so that a mounted folder keeps them. podman and buildah read this file too.

ARG GO_IMAGE=golang:1.26-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${GO_IMAGE} AS build
WORKDIR /src
ENV GOTOOLCHAIN=local CGO_ENABLED=0
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG TARGETOS=linux
ARG TARGETARCH=amd64
# The same build as a release (scripts/release.sh): -trimpath, stripped, version stamped.
RUN scripts/release.sh --targets "${TARGETOS}/${TARGETARCH}" --out /out \
      ${VERSION:+--version "$VERSION"} \
 && mkdir /bin-out \
 && install -m 0755 /out/massgen_*_"${TARGETOS}"_"${TARGETARCH}" /bin-out/massgen \
 && install -m 0755 /out/massgen-temporal_*_"${TARGETOS}"_"${TARGETARCH}" /bin-out/massgen-temporal \
 && /bin-out/massgen --version

FROM ${RUNTIME_IMAGE}
ARG WITH_NODE=0
ARG WITH_PYTHON=0
# ca-certificates for the model APIs; bubblewrap for command_line_execution_mode: srt; the rest
# only when asked for.
RUN set -eu; pkgs="ca-certificates bubblewrap"; \
    [ "$WITH_PYTHON" = 1 ] && pkgs="$pkgs python3"; \
    [ "$WITH_NODE" = 1 ] && pkgs="$pkgs nodejs npm"; \
    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $pkgs \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --create-home --shell /usr/sbin/nologin massgen \
 && mkdir -p /work && chown massgen:massgen /work
COPY --from=build /bin-out/ /usr/local/bin/
COPY --from=build /out/completions/massgen.bash /usr/share/bash-completion/completions/massgen
COPY --from=build /out/man/ /usr/local/share/man/man1/
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["massgen"]
CMD ["--help"]
