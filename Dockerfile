# One image for every kapi service (compose.yaml); the entrypoint is the `kapi` command.
FROM python:3.11-slim-bookworm

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# A fixed non-root uid: compose.yaml runs Envoy with the same uid so it can read the keys in the state volume.
RUN groupadd --gid 10001 kapi \
    && useradd --uid 10001 --gid 10001 --home-dir /home/kapi --create-home --shell /usr/sbin/nologin kapi \
    && mkdir /state && chown kapi:kapi /state

WORKDIR /src
COPY pyproject.toml README.md ./
COPY kapi_proto ./kapi_proto
COPY kapi ./kapi
COPY services ./services
RUN pip install . && rm -rf /src/build /src/*.egg-info

USER 10001:10001
WORKDIR /home/kapi
ENTRYPOINT ["kapi"]
CMD ["--help"]
