-- Passage vectors by passage (file, position), for a search that reranks its lexical candidates with the stored
-- vectors of the built-in sentence model (issue #17). Keep in step with ../sqlite/0018_passage_vector_lookup.sql.
CREATE INDEX kb_passage_vectors_passage ON kb_passage_vectors (model, file_id, position);
