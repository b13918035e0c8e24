// Resumable uploads through the server's tus endpoint: each file is sent in chunks; a
// chunk that fails (a dropped connection) is retried from the offset the server reports,
// so an upload resumes rather than restarts. Progress is reported per file.
import { APIError } from './api.js';

const chunkSize = 4 * 1024 * 1024;
const retries = 5;

const base64 = (text) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));

/** The server's message of a refused tus request. */
async function refusal(response) {
  let message = `${response.status} ${response.statusText}`;
  try {
    message = (await response.json())?.error?.message ?? message;
  } catch { /* not JSON */ }
  return new APIError(response.status, message);
}

/** Sends `body` with PATCH at `offset`, reporting bytes sent through `onProgress`; the new offset. */
function patch(url, offset, body, onProgress) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('PATCH', url);
    request.withCredentials = true;
    request.setRequestHeader('Tus-Resumable', '1.0.0');
    request.setRequestHeader('X-SpotStore-Console', '1');
    request.setRequestHeader('Upload-Offset', String(offset));
    request.setRequestHeader('Content-Type', 'application/offset+octet-stream');
    request.upload.onprogress = (event) => onProgress(offset + event.loaded);
    request.onload = () => {
      if (request.status === 204) resolve(Number(request.getResponseHeader('Upload-Offset')));
      else reject(new APIError(request.status, JSON.parse(request.responseText || '{}')?.error?.message ?? `${request.status}`));
    };
    request.onerror = () => reject(new TypeError('the connection dropped'));
    request.send(body);
  });
}

/** Asks the server how much of the upload at `url` it holds. */
async function offsetOf(url) {
  const response = await fetch(url, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0', 'X-SpotStore-Console': '1' } });
  if (!response.ok) throw await refusal(response);
  return Number(response.headers.get('Upload-Offset'));
}

/**
 * Uploads `file` as object `name` of `bucket`; `onProgress(sent, total)` as it goes.
 * Resolves when the object is stored; rejects with the server's refusal (spot full, too
 * large, type not allowed) or after `retries` failed attempts in a row.
 */
export async function upload(bucket, name, file, onProgress) {
  const created = await fetch(`/v0/b/${encodeURIComponent(bucket)}/uploads`, {
    method: 'POST',
    headers: {
      'Tus-Resumable': '1.0.0', 'X-SpotStore-Console': '1', 'Upload-Length': String(file.size),
      'Upload-Metadata': `objectName ${base64(name)},contentType ${base64(file.type || 'application/octet-stream')}`,
    },
  });
  if (created.status !== 201) throw await refusal(created);
  const url = created.headers.get('Location');
  let offset = 0;
  let failures = 0;
  onProgress(0, file.size);
  while (offset < file.size) {
    try {
      offset = await patch(url, offset, file.slice(offset, offset + chunkSize), (sent) => onProgress(sent, file.size));
      failures = 0;
    } catch (error) {
      if (error instanceof APIError && error.status !== 409) throw error;
      failures += 1;
      if (failures > retries) throw new Error(`the upload stopped after ${retries} attempts: ${error.message}`);
      await new Promise((resolve) => { setTimeout(resolve, 500 * failures); });
      offset = await offsetOf(url);
    }
    onProgress(offset, file.size);
  }
}
