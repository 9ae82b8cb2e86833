// charts_page.js — placeholder replaced below
export async function chartsPage(main) { main.innerHTML = '<h1>Charts</h1>'; }
