/* lock-per-item: does not match */
void example(void)
{
	pthread_mutex_lock(&q->lock);
	for (int i = 0; i < n; i++)
		push(q, items[i]);
	pthread_mutex_unlock(&q->lock);
}
