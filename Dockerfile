# syntax=docker/dockerfile:1
# Build:  docker build --build-arg VERSION=$(git describe --tags --always) \
#                      --build-arg REVISION=$(git rev-parse HEAD) -t loadprobe .
# Run:    docker run -p 10471:10471 -v $PWD/loadprobe.yml:/etc/loadprobe/loadprobe.yml loadprobe
# The image holds no config: mount yours at /etc/loadprobe/loadprobe.yml (a
# config aimed at 127.0.0.1 would load the container itself, where nothing
# listens). To try it without one:
#         docker run -p 10471:10471 loadprobe demo --web.listen-address=:10471

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=unknown
ARG REVISION=unknown
ARG BRANCH=unknown
RUN CGO_ENABLED=0 go build -trimpath -o /out/loadprobe \
      -ldflags "-s -w \
        -X github.com/prometheus/common/version.Version=${VERSION} \
        -X github.com/prometheus/common/version.Revision=${REVISION} \
        -X github.com/prometheus/common/version.Branch=${BRANCH} \
        -X github.com/prometheus/common/version.BuildUser=docker \
        -X github.com/prometheus/common/version.BuildDate=$(date -u +%Y%m%d-%H:%M:%S)" \
      .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/loadprobe /bin/loadprobe
EXPOSE 10471
USER nonroot
ENTRYPOINT ["/bin/loadprobe"]
CMD ["--config.file=/etc/loadprobe/loadprobe.yml"]
