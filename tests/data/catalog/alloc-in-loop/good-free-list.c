/* alloc-in-loop: freeing a list node by node is not an allocation per iteration */
void free_list(struct node *n)
{
	while (n) {
		struct node *next = n->next;
		free(n->name);
		free(n);
		n = next;
	}
}
