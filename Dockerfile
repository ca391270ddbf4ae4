# gpu-topology-extender container image.
#
#   make image                      # no registry: a Debian base from the archive, buildah, an OCI
#                                   # archive in build/image/ (scripts/build-image.sh)
#   docker build -t gpu-topology-extender:0.1.0 .     # or any OCI builder, bases from a registry
#
# Builder: Debian 12 with the build dependencies from scripts/install-deps.sh --build-only (Debian
# archive only; prometheus-cpp is built there as a static library). Runtime: Debian 12 slim with
# only the shared libraries the binaries link: cpprest, yaml-cpp, Boost.Graph (+ Boost.Regex, ICU),
# OpenSSL, and gRPC/protobuf for the agent. The image test: make image-test (docs/testing.md).

ARG BUILDER_IMAGE=debian:bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${BUILDER_IMAGE} AS builder
WORKDIR /src
# Dependencies first: editing the source does not re-run the package install.
COPY scripts/install-deps.sh scripts/debian-mirror.sh scripts/
RUN bash scripts/install-deps.sh --build-only && rm -rf /var/lib/apt/lists/*
COPY . .
# .git is not in the build context: pass the revision for /version, e.g.
#   docker build --build-arg GTE_GIT_REV=$(git describe --always --dirty) .
ARG GTE_GIT_REV=unknown
# Compile jobs; empty: one per CPU.
ARG GTE_BUILD_JOBS=
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGTE_GIT_REV=${GTE_GIT_REV} \
        -DGTE_BUILD_TESTS=OFF -DGTE_BUILD_BENCH=OFF \
 && cmake --build build -j "${GTE_BUILD_JOBS:-$(nproc)}" \
        --target gpu-topology-extender gpu-topology-agent \
 && strip --strip-unneeded build/bin/gpu-topology-extender build/bin/gpu-topology-agent

FROM ${RUNTIME_IMAGE}
# libcpprest2.10 pulls libssl3, libbrotli1 and zlib1g; libboost-graph1.74.0 pulls
# libboost-regex1.74.0 and libicu72; libgrpc++1.51 and libprotobuf32 are the agent's kubelet
# PodResources client. ca-certificates: for --kubeconfig files that rely on the
# system trust store (--in-cluster uses the service-account CA).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libcpprest2.10 libyaml-cpp0.7 libboost-graph1.74.0 libssl3 ca-certificates \
        libgrpc++1.51 libprotobuf32 \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 65532 gte \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin gte

COPY --from=builder /src/build/bin/gpu-topology-extender /usr/local/bin/gpu-topology-extender
# The node agent (DaemonSet, chart value agent.enabled). It loads libnvidia-ml.so.1 at run time
# (the NVIDIA container runtime mounts it), so the image needs no driver.
COPY --from=builder /src/build/bin/gpu-topology-agent /usr/local/bin/gpu-topology-agent
# The kubectl plugin (`kubectl gpu-topology explain|whatif|nodes`), to copy out onto an admin's PATH:
#   docker cp $(docker create IMAGE):/usr/local/bin/kubectl-gpu_topology ~/bin/   (docs/operations.md)
COPY --from=builder /src/tools/kubectl-gpu_topology /usr/local/bin/kubectl-gpu_topology
# The default policy, so the default CMD works without a mounted ConfigMap. The Helm chart mounts
# its own ConfigMap over this directory.
COPY --from=builder /src/config/scheduler-policy.yaml /etc/gpu-topology-extender/scheduler-policy.yaml

# Fail the build, not the pod, when a shared library is missing.
RUN ! ldd /usr/local/bin/gpu-topology-extender /usr/local/bin/gpu-topology-agent | grep 'not found' \
 && /usr/local/bin/gpu-topology-extender version \
 && /usr/local/bin/gpu-topology-agent version

# glibc creates up to 8 malloc arenas per core; with cpprest's worker threads that bloats RSS.
ENV MALLOC_ARENA_MAX=2

USER 65532:65532
EXPOSE 8888
ENTRYPOINT ["/usr/local/bin/gpu-topology-extender"]
# The binary listens on loopback by default; in a container the port must be reachable.
CMD ["serve", "--listen", "0.0.0.0:8888", "--in-cluster", "--policy", "/etc/gpu-topology-extender/scheduler-policy.yaml"]
