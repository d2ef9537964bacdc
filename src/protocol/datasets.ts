// Datasets (docs/guides/evals.md): named, versioned lists of cases an eval run sends to an agent, each an input
// with what is expected of the answer. A PUT that changes the items stores a new version; a run names the
// version it ran on.
import { z } from "zod";
import { InputParts } from "./input-parts";
import { TurnInput } from "./wire";

export const DATASET_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
export const DatasetName = z.string().regex(DATASET_NAME, "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$");
export const MAX_DATASET_ITEMS = 1000;

const Expected = z.unknown().describe("what the answer should be (text, or the JSON value of an agent with output_schema); scorers compare against it");
const Metadata = z.record(z.string(), z.unknown()).describe("free-form, kept with the item and its results");

/** An item as stored: its input and what it expects. */
export const DatasetItemSchema = z
  .object({
    input: z.union([TurnInput, InputParts]).describe("text, or parts (text, and files inline or by URL)"),
    expected: Expected.optional(),
    metadata: Metadata.optional(),
    source: z.object({ session_id: z.string(), turn_id: z.string() }).optional().describe("the recorded turn it was taken from"),
  })
  .meta({ id: "DatasetItem" });
export type DatasetItem = z.infer<typeof DatasetItemSchema>;

const Given = z.strictObject({ input: z.union([TurnInput, InputParts]), expected: Expected.optional(), metadata: Metadata.optional() });
const FromTurn = z.strictObject({
  from: z.strictObject({ session_id: z.string().min(1), turn_id: z.string().min(1) }).describe("a recorded turn: its input, and its answer as expected"),
  metadata: Metadata.optional(),
});
export const DatasetItemInput = z.union([Given, FromTurn]);
export type DatasetItemInput = z.infer<typeof DatasetItemInput>;

export const DatasetPutBody = z.strictObject({
  items: z.array(DatasetItemInput).min(1, "must not be empty").max(MAX_DATASET_ITEMS, `must have at most ${MAX_DATASET_ITEMS} items`),
});

export const DatasetSchema = z
  .object({
    name: z.string(),
    version: z.number().describe("numbered from 1 per dataset; a PUT with the same items stores none"),
    content_hash: z.string().describe("SHA-256 of the canonical items"),
    item_count: z.number(),
    created_at: z.number().describe("when this version was stored, ms since the epoch"),
    created_by: z.string().nullable(),
  })
  .meta({ id: "Dataset" });
export type DatasetSummary = z.infer<typeof DatasetSchema>;

export const DatasetWithItems = DatasetSchema.extend({ items: z.array(DatasetItemSchema) }).meta({ id: "DatasetVersion" });
export type DatasetVersion = z.infer<typeof DatasetWithItems>;
