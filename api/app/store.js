// Bytes to the object store, straight from the browser: a presigned form in one POST, or
// signed parts PUT four at a time (as the command-line client sends them), each with upload
// progress (fetch has none) and tried again alone when the connection drops.

const PARTS_IN_FLIGHT = 4;

/** One request to the store; `progress` is told the bytes of this body sent so far. */
function send(method, url, body, progress) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open(method, url);
    request.upload.onprogress = (event) => progress(event.loaded);
    request.onload = () =>
      request.status < 300 ? resolve() : reject(new Error(`the store refused the bytes (HTTP ${request.status})`));
    request.onerror = () => reject(new Error('the connection to the store was cut'));
    request.send(body);
  });
}

async function retried(attempt) {
  for (let n = 1; ; n += 1) {
    try {
      return await attempt();
    } catch (e) {
      if (n === 4) throw e;
      await new Promise((resolve) => setTimeout(resolve, 1000 * n));
    }
  }
}

/** The file in one form POST: the form's fields unchanged, then the file, last. */
export async function sendForm(target, file, progress) {
  const body = new FormData();
  for (const [name, value] of Object.entries(target.uploadForm)) body.append(name, value);
  body.append('file', file);
  await retried(() => send('POST', target.uploadUrl, body, progress));
}

/**
 * The parts of `file` the store does not hold yet (`plan`: the answer that began or resumed the
 * upload); `sign(numbers)` signs more parts when the plan's run out. `progress` is told the
 * bytes held so far, parts stored before included.
 */
export async function sendParts(plan, file, sign, progress) {
  const stored = new Set(plan.parts.map((p) => p.partNumber));
  const urls = new Map(plan.signedParts.map((p) => [p.partNumber, p]));
  const missing = [];
  for (let n = 1; n <= plan.partCount; n += 1) if (!stored.has(n)) missing.push(n);
  let done = plan.parts.reduce((sum, p) => sum + p.size, 0);
  const sending = new Map();
  const shown = () => progress(done + [...sending.values()].reduce((a, b) => a + b, 0));
  shown();
  async function signed(n) {
    if (!urls.has(n)) {
      const wanted = missing.filter((m) => m >= n && !urls.has(m)).slice(0, 100);
      for (const part of await sign(wanted)) urls.set(part.partNumber, part);
    }
    return urls.get(n);
  }
  let next = 0;
  async function worker() {
    while (next < missing.length) {
      const n = missing[next];
      next += 1;
      const part = await signed(n);
      const start = (n - 1) * plan.partSize;
      const bytes = file.slice(start, start + part.size);
      sending.set(n, 0);
      await retried(() => send('PUT', part.url, bytes, (loaded) => { sending.set(n, loaded); shown(); }));
      sending.delete(n);
      done += part.size;
      shown();
    }
  }
  await Promise.all(Array.from({ length: Math.min(PARTS_IN_FLIGHT, missing.length) }, worker));
}
