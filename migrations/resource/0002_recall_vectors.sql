-- Recall with embeddings (memory.recall.embedding_model): each message's vector beside its text, as float32
-- bytes (NULL: indexed without an embedding model); searched by brute force in the resource's object.
ALTER TABLE recall_entries ADD COLUMN vector BLOB;
-- How many messages hold each word: a search leaves out the words most messages hold (recall-index.ts).
CREATE VIRTUAL TABLE recall_vocab USING fts5vocab (recall_fts, 'row');
