// The R2 side of erasing a session: every object under its prefix (spilled artifacts, workspace files).
const PAGE = 1000;

export async function eraseSessionBlobs(bucket: R2Bucket, sessionId: string): Promise<number> {
  const prefix = `sessions/${sessionId}/`;
  let deleted = 0;
  for (;;) {
    // Deleting as we go, so each listing starts again from what is left.
    const listed = await bucket.list({ prefix, limit: PAGE });
    if (listed.objects.length === 0) return deleted;
    await bucket.delete(listed.objects.map((o) => o.key));
    deleted += listed.objects.length;
  }
}
