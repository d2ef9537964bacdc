// Datasets (docs/guides/evals.md): versioned cases for eval runs.
import { z } from "zod";
import { DatasetName, DatasetPutBody, DatasetSchema, DatasetWithItems } from "../datasets";
import { json, jsonBody, operation } from "./operation";

const Name = z.object({ name: z.string().meta({ example: "arithmetic" }) });

export const putDataset = operation({
  method: "put",
  path: "/v1/datasets/{name}",
  operationId: "putDataset",
  summary:
    "Store a dataset's items (input, expected, metadata; or `{from: {session_id, turn_id}}`, a recorded turn's input and answer): a new version when the items changed",
  permission: "agents.write",
  rateLimit: "request",
  params: Name,
  body: jsonBody(DatasetPutBody),
  responses: { 200: json(DatasetSchema, "Unchanged: the newest version"), 201: json(DatasetSchema, "A new version") },
  errors: [422],
});

export const listDatasets = operation({
  method: "get",
  path: "/v1/datasets",
  operationId: "listDatasets",
  summary: "The datasets, each as its newest version (without items)",
  permission: "agents.read",
  rateLimit: "request",
  responses: { 200: json(z.object({ datasets: z.array(DatasetSchema) }), "Datasets") },
  errors: [],
});

export const getDataset = operation({
  method: "get",
  path: "/v1/datasets/{name}",
  operationId: "getDataset",
  summary: "A dataset version with its items (the newest, or `?version=`)",
  permission: "agents.read",
  rateLimit: "request",
  params: Name,
  query: z.object({ version: z.string().optional().describe("a version number (default: the newest)") }),
  responses: { 200: json(DatasetWithItems, "The version") },
  errors: [404, 422],
});

export const deleteDataset = operation({
  method: "delete",
  path: "/v1/datasets/{name}",
  operationId: "deleteDataset",
  summary: "Delete a dataset and all its versions (runs keep their cases)",
  permission: "agents.write",
  rateLimit: "request",
  params: Name,
  responses: { 200: json(z.object({ deleted: z.literal(true), name: DatasetName }), "Deleted") },
  errors: [404],
});
