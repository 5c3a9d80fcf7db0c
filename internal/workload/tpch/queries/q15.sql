-- Top Supplier (Q15): the view is created, queried and dropped within the query's time.
create view fb_revenue[STREAM] (supplier_no, total_revenue) as
	select
		l_suppkey,
		sum(l_extendedprice * (1 - l_discount))
	from
		lineitem
	where
		l_shipdate >= date '[DATE]'
		and l_shipdate < date '[DATE]' + interval '3' month
	group by
		l_suppkey;

select
	s_suppkey,
	s_name,
	s_address,
	s_phone,
	total_revenue
from
	supplier,
	fb_revenue[STREAM]
where
	s_suppkey = supplier_no
	and total_revenue = (
		select
			max(total_revenue)
		from
			fb_revenue[STREAM]
	)
order by
	s_suppkey;

drop view fb_revenue[STREAM]
