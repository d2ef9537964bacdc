// A file posted as a browser form (multipart/form-data): the form's one `file` field, with the type and name
// the browser gave it. The upload route checks it as it checks raw bytes.
import { ApiError } from "../protocol/errors";
import { bareMediaType } from "../session/files/file-rules";

/** Room for the form's boundaries and part headers on top of the file's own limit. */
export const FORM_OVERHEAD_BYTES = 64 * 1024;

export async function formFile(body: Uint8Array, contentType: string): Promise<{ bytes: Uint8Array; media_type: string; filename: string | null }> {
  let form: FormData;
  try {
    form = await new Response(body, { headers: { "content-type": contentType } }).formData();
  } catch {
    throw ApiError.validation([{ path: "body", reason: "is not a valid multipart/form-data body" }]);
  }
  // These workers types give form fields as strings only; a file field is a File.
  const fields = form.getAll("file") as unknown as (File | string)[];
  const file = fields[0];
  if (fields.length !== 1 || typeof file === "string" || file === undefined) {
    throw ApiError.validation([{ path: "file", reason: "must be the form's one file field" }]);
  }
  return { bytes: new Uint8Array(await file.arrayBuffer()), media_type: bareMediaType(file.type), filename: file.name || null };
}
